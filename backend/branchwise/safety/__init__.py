"""Keeping the agent's actions safe. `classifier` tells destructive actions apart before they run, from the page
and a vocabulary of commit words (`vocabulary`), measured on a labelled corpus of real shop actions (`corpus`)."""

from .classifier import SafetyClassifier, SafetyConfig
from .vocabulary import Intent, Vocabulary, normalize

__all__ = ["Intent", "SafetyClassifier", "SafetyConfig", "Vocabulary", "normalize"]
