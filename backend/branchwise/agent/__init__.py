"""The agent: an environment over one browser session, and the loops that choose actions in it."""
