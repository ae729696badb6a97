"""Settings are read in one place: the environment wins over the data directory's config.toml, which wins over the
defaults; a bad value or an unknown key is refused with where it came from."""

from __future__ import annotations

from pathlib import Path

import pytest

from branchwise.settings import CONFIG_FILE, Settings, SettingsError, default_data_dir


def test_defaults_without_environment_or_file(tmp_path: Path) -> None:
    settings = Settings.load({}, data_dir=tmp_path)
    assert settings.data_dir == tmp_path and not settings.model_configured
    assert (settings.allow_sites, settings.block_sites, settings.confirm_timeout_s) == ((), (), None)
    assert not settings.display


def test_the_environment_wins_over_the_file(tmp_path: Path) -> None:
    (tmp_path / CONFIG_FILE).write_text('model = "from-file"\nreward_model = "judge"\nallow_sites = ["a.example"]\n'
                                        'confirm_timeout_s = 30\n')
    settings = Settings.load({"BRANCHWISE_MODEL": "from-env", "BRANCHWISE_BLOCK_SITES": "x.example, *.y.example",
                              "DISPLAY": ":0"}, data_dir=tmp_path)
    assert (settings.model, settings.reward_model) == ("from-env", "judge")
    assert settings.allow_sites == ("a.example",) and settings.block_sites == ("x.example", "*.y.example")
    assert settings.confirm_timeout_s == 30 and settings.display and settings.model_configured


def test_the_data_dir_follows_xdg(tmp_path: Path) -> None:
    assert default_data_dir({"XDG_DATA_HOME": str(tmp_path)}) == tmp_path / "branchwise"
    assert Settings.load({"XDG_DATA_HOME": str(tmp_path)}).data_dir == tmp_path / "branchwise"


def test_a_bad_value_names_the_setting_and_where_to_fix_it(tmp_path: Path) -> None:
    with pytest.raises(SettingsError, match=r"confirm_timeout_s \(\$BRANCHWISE_CONFIRM_TIMEOUT or config.toml\)"):
        Settings.load({"BRANCHWISE_CONFIRM_TIMEOUT": "soon"}, data_dir=tmp_path)
    with pytest.raises(SettingsError, match="greater than 0"):
        Settings.load({"BRANCHWISE_CONFIRM_TIMEOUT": "-5"}, data_dir=tmp_path)


def test_an_unknown_or_broken_file_is_refused_with_its_path(tmp_path: Path) -> None:
    (tmp_path / CONFIG_FILE).write_text('modle = "typo"\n')
    with pytest.raises(SettingsError, match=r"unknown setting\(s\) modle"):
        Settings.load({}, data_dir=tmp_path)
    (tmp_path / CONFIG_FILE).write_text("model = \n")
    with pytest.raises(SettingsError, match=f"cannot read {tmp_path / CONFIG_FILE}"):
        Settings.load({}, data_dir=tmp_path)
