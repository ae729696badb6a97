"""Reading labelled lines out of models' free-text replies (`Score: 4`, `**Answer:** $12.99`): small models decorate
them with markdown and quotes, and repeat the format before they answer, so the last such line counts."""

from __future__ import annotations

import re

# Markdown decorations and quotes models put around a label and its value: bold, headings, quotes, bullets.
DECOR = r"[\s*_#>`\"'“”‘’-]*"
# What goes from both ends of a value read off a reply: markup and double quotes.
VALUE_DECOR = " \t*_`\"“”"


def last_field(text: str, name: str) -> str | None:
    """The value of the last `name:` line (`name` is a regular expression), stripped of decorations; None without
    one."""
    found = re.findall(rf"^{DECOR}{name}{DECOR}[:：=]\s*(.*)$", text, re.I | re.M)
    # Bold closes after the colon (`**Answer:** "Nancy"`): markup and double quotes go from both ends at once.
    return found[-1].strip(VALUE_DECOR) if found else None
