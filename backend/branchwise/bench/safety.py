"""Destructive-action classifier benchmark: precision and recall on the labelled corpus of real shop actions.

    python -m branchwise.bench.safety [--corpus PATH] [--no-baseline]

Truth = the action changed the site's database (the corpus is built by `python -m branchwise.bench.safety_corpus
--write`). Positive = asked about: by the classifier before the action, and, in the "with the network gate" rows, also
by the gate when the action sends a mutating request no approval covers — how a run asks. Prints precision, recall,
questions per action and the confusion counts, overall and per site, and every false negative and false positive
with the classifier's reasons, for SafetyClassifier (the search default) and, as the baseline, WebOperator's Alg. 2
(HeuristicClassifier). Needs no browser.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..core.classes import ActionClassifier
from ..safety import SafetyClassifier
from ..safety.corpus import DEFAULT_CORPUS, load_corpus
from ..safety.evaluation import evaluate, report
from ..search.heuristic import HeuristicClassifier


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--no-baseline", action="store_true", help="skip WebOperator's Alg. 2")
    args = parser.parse_args(argv)
    corpus = load_corpus(args.corpus)
    classifiers: list[tuple[str, ActionClassifier]] = [("SafetyClassifier", SafetyClassifier())]
    if not args.no_baseline:
        classifiers.append(("WebOperator Alg. 2 (HeuristicClassifier, baseline)", HeuristicClassifier()))
    for name, classifier in classifiers:
        sys.stdout.write(report(name, evaluate(classifier, corpus), len(corpus.records)) + "\n\n")
        sys.stdout.write(report(f"{name} with the network gate", evaluate(classifier, corpus, gate=True),
                                len(corpus.records)) + "\n\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
