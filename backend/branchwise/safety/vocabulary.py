"""What a control's label says it does, in English, German, French and Spanish.

Commit words name an action that changes something on a server (buy, pay, place order, delete, send, publish...).
Exceptions name controls that only navigate (search, sort, next page, back) or change the view (expand, close).
Labels and phrases are compared after `normalize` (case-folded, accents and punctuation dropped) and always as whole
words: "Post" never matches "Postleitzahl", and "Cancel" alone is not the commit phrase "Cancel order".

Commit phrases count anywhere in a short label, because German and other languages put the verb last ("Jetzt kaufen",
"Konto löschen"); in a long label (a sentence, usually a help link) only at its start. Exceptions count only as the
whole label or its leading phrase ("Sort by price", "Search products").
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import Enum

_NON_WORD = re.compile(r"[^\w]+")


class Intent(str, Enum):
    COMMIT = "commit"
    # Confirms whatever the page set up (submit, confirm, accept) without naming a change of its own.
    CONFIRM = "confirm"
    DELETE = "delete"
    # Enters a flow that commits later (checkout, sign in, sign up): a commit on a button, but a link with such a
    # label only opens the form.
    ENTRY = "entry"
    NAVIGATION = "navigation"
    TRANSIENT = "transient"


COMMIT_INTENTS = frozenset({Intent.COMMIT, Intent.CONFIRM, Intent.DELETE, Intent.ENTRY})
# What a link's label must say to make a GET link suspicious: entry words only lead to a form.
LINK_COMMIT_INTENTS = frozenset({Intent.COMMIT, Intent.CONFIRM, Intent.DELETE})
# Words that name no change of their own: where the network gate holds everything a script-driven control can send,
# such a control runs, and the gate asks about what it really sends (classifier.py).
NAMES_NO_CHANGE = frozenset({Intent.CONFIRM, Intent.ENTRY})

# language -> intent -> phrases, as people write them; normalized when the vocabulary is built.
PHRASES: Mapping[str, Mapping[Intent, tuple[str, ...]]] = {
    "en": {
        Intent.COMMIT: (
            "buy", "buy now", "purchase", "pay", "pay now", "place order", "place your order", "order now",
            "complete order", "complete purchase", "confirm order", "confirm purchase", "confirm payment",
            "submit order", "send", "send message", "post", "publish", "transfer", "transfer money", "donate",
            "book now", "reserve", "subscribe", "add to cart", "add to basket", "add to bag", "add to order", "save",
            "save changes", "update", "upload", "approve", "reply", "comment", "vote", "create",
        ),
        Intent.CONFIRM: (
            "confirm", "submit", "accept",
        ),
        Intent.DELETE: (
            "delete", "remove", "discard", "erase", "clear cart", "empty cart", "unsubscribe", "cancel order",
            "cancel my order", "cancel subscription", "cancel booking", "cancel reservation", "deactivate",
            "close account", "delete account", "revoke", "sign out", "log out", "logout",
        ),
        Intent.ENTRY: (
            "checkout", "check out", "proceed to checkout", "go to checkout", "continue to checkout",
            "continue to payment", "sign in", "log in", "login", "sign up", "register", "create account",
            "create an account",
        ),
        Intent.NAVIGATION: (
            "search", "find", "go", "filter", "filters", "apply filter", "apply filters", "clear filters",
            "reset filters", "refine", "sort", "sort by", "next", "next page", "previous", "previous page", "prev",
            "first page", "last page", "page", "back", "go back", "back to", "go to", "view", "view all", "see all",
            "show results", "see results", "browse", "home", "continue shopping", "refresh", "reload",
        ),
        Intent.TRANSIENT: (
            "expand", "expand all", "collapse", "collapse all", "show", "hide", "show more", "show less", "more",
            "less", "see more", "load more", "read more", "close", "dismiss", "menu", "open menu",
            "toggle navigation", "toggle menu", "details", "zoom in", "zoom out", "help", "learn more", "skip to",
            "preview", "export", "print",
        ),
    },
    "de": {
        Intent.COMMIT: (
            "kaufen", "jetzt kaufen", "bezahlen", "jetzt bezahlen", "zahlen", "bestellen", "jetzt bestellen",
            "zahlungspflichtig bestellen", "kostenpflichtig bestellen", "bestellung abschicken", "bestellung aufgeben",
            "abschicken", "senden", "veröffentlichen", "posten", "überweisen", "überweisung ausführen", "spenden",
            "buchen", "jetzt buchen", "abonnieren", "in den warenkorb", "in den einkaufswagen", "speichern",
            "aktualisieren", "hochladen", "antworten", "kommentieren", "genehmigen", "erstellen",
        ),
        Intent.CONFIRM: (
            "bestätigen", "akzeptieren", "zustimmen", "einreichen", "übermitteln", "absenden",
        ),
        Intent.DELETE: (
            "löschen", "entfernen", "abbestellen", "kündigen", "stornieren", "bestellung stornieren",
            "konto löschen", "abmelden", "ausloggen", "warenkorb leeren", "verwerfen",
        ),
        Intent.ENTRY: (
            "zur kasse", "kasse", "zur kasse gehen", "registrieren", "anmelden", "einloggen", "konto erstellen",
        ),
        Intent.NAVIGATION: (
            "suchen", "suche", "finden", "los", "filtern", "filter anwenden", "filter zurücksetzen", "sortieren",
            "sortieren nach", "weiter", "nächste", "nächste seite", "vorherige", "vorherige seite", "zurück",
            "zurück zu", "gehe zu", "startseite", "zur startseite", "anzeigen", "alle anzeigen",
            "ergebnisse anzeigen", "weiter einkaufen",
        ),
        Intent.TRANSIENT: (
            "ausklappen", "einklappen", "mehr", "mehr anzeigen", "weniger anzeigen", "mehr laden", "schließen",
            "menü", "details", "hilfe",
        ),
    },
    "fr": {
        Intent.COMMIT: (
            "acheter", "acheter maintenant", "payer", "commander", "passer la commande", "passer commande",
            "valider la commande", "envoyer", "publier", "poster", "effectuer le virement", "valider le virement",
            "transférer", "faire un don", "réserver", "s'abonner", "ajouter au panier", "enregistrer", "mettre à jour",
            "répondre", "commenter", "approuver", "créer",
        ),
        Intent.CONFIRM: (
            "confirmer", "valider", "soumettre", "accepter",
        ),
        Intent.DELETE: (
            "supprimer", "retirer", "effacer", "vider le panier", "se désabonner", "se désinscrire",
            "annuler la commande", "annuler ma commande", "résilier", "se déconnecter", "déconnexion",
        ),
        Intent.ENTRY: (
            "passer à la caisse", "paiement", "s'inscrire", "se connecter", "connexion", "créer un compte",
        ),
        Intent.NAVIGATION: (
            "rechercher", "recherche", "chercher", "filtrer", "trier", "trier par", "suivant", "page suivante",
            "précédent", "page précédente", "retour", "revenir", "aller à", "voir", "voir tout", "afficher",
            "accueil", "continuer mes achats", "continuer vos achats",
        ),
        Intent.TRANSIENT: (
            "développer", "réduire", "plus", "afficher plus", "voir plus", "afficher moins", "fermer", "menu",
            "détails", "aide", "en savoir plus",
        ),
    },
    "es": {
        Intent.COMMIT: (
            "comprar", "comprar ahora", "pagar", "pagar ahora", "realizar pedido", "hacer pedido", "confirmar pedido",
            "confirmar compra", "enviar", "publicar", "transferir", "donar", "reservar", "suscribirse",
            "añadir al carrito", "agregar al carrito", "añadir a la cesta", "guardar", "actualizar", "subir",
            "responder", "comentar", "aprobar", "crear",
        ),
        Intent.CONFIRM: (
            "confirmar", "aceptar",
        ),
        Intent.DELETE: (
            "eliminar", "borrar", "quitar", "vaciar carrito", "vaciar la cesta", "darse de baja", "dar de baja",
            "cancelar pedido", "cancelar suscripción", "anular", "cerrar sesión",
        ),
        Intent.ENTRY: (
            "finalizar compra", "tramitar pedido", "ir a caja", "registrarse", "iniciar sesión", "crear cuenta",
        ),
        Intent.NAVIGATION: (
            "buscar", "búsqueda", "filtrar", "aplicar filtros", "ordenar", "ordenar por", "siguiente",
            "página siguiente", "anterior", "página anterior", "volver", "atrás", "ir a", "ver", "ver todo",
            "mostrar", "inicio", "seguir comprando", "continuar comprando",
        ),
        Intent.TRANSIENT: (
            "expandir", "contraer", "ver más", "mostrar más", "cargar más", "ver menos", "cerrar", "menú",
            "detalles", "ayuda",
        ),
    },
}

# Commit phrases that, on a link, name what the page it opens lets one write: "Reply", "Submit" (a new post), "Create
# issue". The form there is what sends it, and is asked about when submitted; the link itself sends nothing.
WRITES: Mapping[str, tuple[str, ...]] = {
    "en": ("reply", "comment", "create", "submit"),
    "de": ("antworten", "kommentieren", "erstellen", "einreichen"),
    "fr": ("répondre", "commenter", "créer", "soumettre"),
    "es": ("responder", "comentar", "crear"),
}

# Labels that only close a dialog when the control is inside one; outside a dialog "Cancel" may cancel an order.
DISMISS: Mapping[str, tuple[str, ...]] = {
    "en": ("cancel", "no", "not now", "no thanks", "maybe later"),
    "de": ("abbrechen", "nein", "nicht jetzt", "nein danke"),
    "fr": ("annuler", "non", "pas maintenant", "non merci"),
    "es": ("cancelar", "no", "ahora no", "no gracias"),
}


def normalize(text: str) -> str:
    """Case-folded words without accents or punctuation, separated by single spaces ("Löschen ›" -> "loschen")."""
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    plain = "".join(c for c in decomposed if not unicodedata.combining(c))
    return " ".join(_NON_WORD.sub(" ", plain).split())


@dataclass(frozen=True)
class Phrase:
    text: str
    words: tuple[str, ...]
    lang: str
    intent: Intent


@dataclass(frozen=True)
class Match:
    phrase: Phrase
    whole: bool

    @property
    def lang(self) -> str:
        return self.phrase.lang

    @property
    def intent(self) -> Intent:
        return self.phrase.intent


def _phrases(table: Mapping[str, Mapping[Intent, tuple[str, ...]]]) -> tuple[Phrase, ...]:
    return tuple(
        Phrase(text, tuple(normalize(text).split()), lang, intent)
        for lang, by_intent in table.items() for intent, texts in by_intent.items() for text in texts
    )


def _index(phrases: Iterable[Phrase]) -> dict[str, list[Phrase]]:
    by_first: dict[str, list[Phrase]] = {}
    for phrase in phrases:
        by_first.setdefault(phrase.words[0], []).append(phrase)
    for group in by_first.values():
        group.sort(key=lambda p: -len(p.words))
    return by_first


@dataclass(frozen=True)
class Vocabulary:
    phrases: tuple[Phrase, ...] = field(default_factory=lambda: _phrases(PHRASES))
    dismiss: tuple[Phrase, ...] = field(
        default_factory=lambda: _phrases({lang: {Intent.TRANSIENT: texts} for lang, texts in DISMISS.items()}))
    writes: frozenset[str] = field(
        default_factory=lambda: frozenset(normalize(text) for texts in WRITES.values() for text in texts))
    # Labels with more words than this are sentences (help links, headings): commit words count only at their start.
    short_label_words: int = 6
    _by_first: dict[str, list[Phrase]] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_by_first", _index(self.phrases))

    def _at(self, words: list[str], start: int, intents: frozenset[Intent]) -> Phrase | None:
        """The longest phrase of `intents` that starts at words[start]."""
        for phrase in self._by_first.get(words[start], ()):
            end = start + len(phrase.words)
            if phrase.intent in intents and tuple(words[start:end]) == phrase.words:
                return phrase
        return None

    def commit(self, label: str, intents: frozenset[Intent] = COMMIT_INTENTS) -> Match | None:
        """The commit phrase a label contains (longest first, earliest first), or None."""
        words = normalize(label).split()
        starts = range(len(words)) if len(words) <= self.short_label_words else range(min(1, len(words)))
        best: Phrase | None = None
        for start in starts:
            phrase = self._at(words, start, intents)
            if phrase is not None and (best is None or len(phrase.words) > len(best.words)):
                best = phrase
        return Match(best, len(best.words) == len(words)) if best else None

    def only_writes(self, label: str) -> Match | None:
        """The phrase naming what one writes ("Reply", "Create") when every commit phrase of the label is one: on a
        link, it opens the form where that is written. None otherwise."""
        words = normalize(label).split()
        starts = range(len(words)) if len(words) <= self.short_label_words else range(min(1, len(words)))
        found = [p for start in starts if (p := self._at(words, start, LINK_COMMIT_INTENTS)) is not None]
        if not found or any(" ".join(p.words) not in self.writes for p in found):
            return None
        return Match(found[0], len(found[0].words) == len(words))

    def exception(self, label: str) -> Match | None:
        """The navigational or transient phrase a label is, or starts with, or None."""
        words = normalize(label).split()
        if not words:
            return None
        phrase = self._at(words, 0, frozenset({Intent.NAVIGATION, Intent.TRANSIENT}))
        return Match(phrase, len(phrase.words) == len(words)) if phrase else None

    def dismisses(self, label: str) -> Match | None:
        """Whether the whole label is one that closes a dialog ("Cancel", "Nein")."""
        text = normalize(label)
        phrase = next((p for p in self.dismiss if " ".join(p.words) == text), None)
        return Match(phrase, True) if phrase else None

    def url_deletes(self, path: str) -> Match | None:
        """A delete word among the words of a URL path ("/account/delete", "/logout")."""
        words = normalize(path).split()
        for start in range(len(words)):
            phrase = self._at(words, start, frozenset({Intent.DELETE}))
            if phrase is not None:
                return Match(phrase, False)
        return None
