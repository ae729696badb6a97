"""The evaluation harness: WebArena-format task configs, WebArena's evaluators, and (to come) `branchwise eval`."""
