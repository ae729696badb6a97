"""Knobs of observation processing."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

# States whose `False` says something (an unticked box, a collapsed menu, a toggle that is off). Other states are only
# shown when true: `required: False` on every field is noise the model pays for in tokens.
STATES_SHOWN_WHEN_FALSE = ("checked", "pressed", "expanded")


class ObservationConfig(BaseModel):
    """How the AX tree becomes text. No length limit here: the prompt builder truncates."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    # Properties printed on a node's line, in this order. `value` is the node's own value (text of a field, the chosen
    # option of a select), `clickable` marks a box kept only for its click listener, the rest are CDP AX properties.
    render_props: tuple[str, ...] = (
        "value", "checked", "selected", "pressed", "expanded", "disabled", "required", "invalid", "focused",
        "clickable",
    )
    show_when_false: tuple[str, ...] = STATES_SHOWN_WHEN_FALSE
    # Properties kept on ElementInfo for other modules (link targets for safety, popups and read-only state for action
    # validation) without spending prompt tokens on them.
    keep_props: tuple[str, ...] = ("url", "hasPopup", "level", "editable", "readonly", "multiselectable", "modal")
    # Replace values of password and payment-card fields by `mask`.
    redact: bool = True
    mask: str = "••••"
    # A child frame's RootWebArea adds a line that only repeats its Iframe node; lift its content under the Iframe.
    lift_frame_roots: bool = True
