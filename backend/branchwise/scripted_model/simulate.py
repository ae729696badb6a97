r"""Simulated answers: a scripted reply may refer to what the page shows instead of hard-coding it.

- `click [{{id: link 'Garden'}}]` becomes `click [4711]` when the prompt's observation has the line
  `[4711] link 'Garden'`. Ids are DOM node ids that change from one page load to the next, so scripts that must work
  on live pages say what they mean, and the scripted model looks the id up as a model would by reading the page.
- `stop [{{match: \$\d+\.\d\d}}]` becomes the first text in the observation matching the regular expression, so
  an answer is read off the page the browser really showed (a test then checks it against the site's database).
  With a group in the pattern, the first group is used: `click [{{match: \[(\d+)\] link 'Deal}}]`.
"""

from __future__ import annotations

import re

ID_PLACEHOLDER = re.compile(r"\{\{\s*id:\s*(?P<role>[\w-]+)\s+(?P<quote>['\"])(?P<name>.*?)(?P=quote)\s*\}\}")
MATCH_PLACEHOLDER = re.compile(r"\{\{\s*match:\s*(?P<pattern>.+?)\s*\}\}")
OBSERVATION_START = "OBSERVATION:"


def resolve_placeholders(text: str, prompt: str) -> str:
    """Fill the placeholders from the prompt's observation (the text after its `OBSERVATION:` line, if any).

    A placeholder nothing matches stays visible as `{{no element: ...}}` / `{{no match: ...}}`, which no action parser
    accepts: a broken script then fails loudly in the agent instead of doing something else.
    """
    start = prompt.find(OBSERVATION_START)
    page = prompt[start:] if start >= 0 else prompt

    def lookup(match: re.Match[str]) -> str:
        role, name = match["role"], match["name"]
        for quote in ("'", '"'):
            line = re.search(rf"\[(\d+)\] {re.escape(role)} {quote}{re.escape(name)}{quote}", page)
            if line:
                return line.group(1)
        return f"{{{{no element: {role} '{name}'}}}}"

    def first_match(match: re.Match[str]) -> str:
        found = re.search(match["pattern"], page)
        if not found:
            return f"{{{{no match: {match['pattern']}}}}}"
        return found.group(1) if found.re.groups else found.group(0)

    return MATCH_PLACEHOLDER.sub(first_match, ID_PLACEHOLDER.sub(lookup, text))
