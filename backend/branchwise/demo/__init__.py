"""The sample task `branchwise demo` runs, and the script its bundled scripted model answers from."""
