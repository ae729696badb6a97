"""Scripted replies that read the page: element ids by role and name, answers by pattern."""

from branchwise.scripted_model.simulate import resolve_placeholders

PROMPT = (
    "Example: [9] link 'Garden'\n"
    "OBSERVATION:\n[12] link 'Garden'\n\t[13] StaticText '$4.99'\n\t[14] button \"Tom's pick\"\nURL: http://x/\n"
)


def test_ids_come_from_the_observation_not_the_examples() -> None:
    assert resolve_placeholders("click [{{id: link 'Garden'}}]", PROMPT) == "click [12]"
    assert resolve_placeholders("click [{{ id: button \"Tom's pick\" }}]", PROMPT) == "click [14]"


def test_match_reads_text_off_the_page() -> None:
    assert resolve_placeholders(r"stop [{{match: \$\d+\.\d\d}}]", PROMPT) == "stop [$4.99]"


def test_missing_elements_stay_visible_so_the_run_fails_loudly() -> None:
    assert resolve_placeholders("click [{{id: link 'Toys'}}]", PROMPT) == "click [{{no element: link 'Toys'}}]"
    assert resolve_placeholders(r"stop [{{match: €\d+}}]", PROMPT) == r"stop [{{no match: €\d+}}]"
