"""Tree search over real pages: the tree, candidate actions and their scores, selection, and backtracking."""
