"""The shared vocabulary, below every other layer: what an action is classed as, what it may send and what it sent,
the approver and its decisions, model usage, and the status names runs and nodes go through.

Layers import one way: core; then safety; then agent (the browser environment, run records, reporting); then search
(the strategies and the run lifecycle); then the CLI. The store, observation, actions, protocol and llm modules sit
beside core: they import nothing above them.
"""
