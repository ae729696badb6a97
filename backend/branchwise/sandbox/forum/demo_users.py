"""Accounts and posts that exist in every seeded forum, whatever the seed.

Tasks can name them ("edit your post about summer reading in f/books"); tests should still read ids and scores from
the database through `ForumQueries` rather than copy them from here.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime


@dataclass(frozen=True)
class ForumAccount:
    username: str
    password: str
    biography: str
    # Forums the account is subscribed to in a fresh database.
    subscriptions: tuple[str, ...]


@dataclass(frozen=True)
class LandmarkPost:
    forum: str
    author: str
    title: str
    body: str
    created_at: datetime
    url: str | None = None


# Named after WebArena's Reddit user so WebArena-style task wording reads naturally.
DEMO_USER = ForumAccount(
    username="MarvelsGrantMan136",
    password="test1234",
    biography="Comics, books and the occasional recipe.",
    subscriptions=("books", "movies", "gaming", "science", "cooking", "programming", "boston"),
)

# A second member whose posts the demo user must not be able to edit.
OTHER_USER = ForumAccount(
    username="harbor_lights",
    password="harbor-lights-88",
    biography="Boston born, coffee fuelled.",
    subscriptions=("boston", "coffee", "travel", "photography"),
)

DEMO_ACCOUNTS: tuple[ForumAccount, ...] = (DEMO_USER, OTHER_USER)

SUMMER_READING = "What are your must-read books for this summer?"
RAMEN_RECIPE = "My weeknight ramen recipe, refined over two years"
BOSTON_COFFEE = "Best quiet coffee shops near Harvard Square?"
FUSION_LINK = "Fusion experiment sustains plasma for a record six minutes"

LANDMARK_POSTS: tuple[LandmarkPost, ...] = (
    LandmarkPost(
        "books", DEMO_USER.username, SUMMER_READING,
        "I am putting together a reading list for the summer holidays. So far I have Piranesi and Middlemarch. "
        "What else should be on it?",
        datetime(2025, 5, 20, 18, 4),
    ),
    LandmarkPost(
        "cooking", DEMO_USER.username, RAMEN_RECIPE,
        "Broth: chicken stock, kombu and dried shiitake simmered for an hour. Tare: soy sauce, mirin and a little "
        "sugar. Top with a soft egg and spring onions. Takes 90 minutes start to finish.",
        datetime(2025, 3, 2, 19, 30),
    ),
    LandmarkPost(
        "boston", OTHER_USER.username, BOSTON_COFFEE,
        "I work remotely and need somewhere calm with good coffee and a few power outlets. Suggestions?",
        datetime(2025, 4, 11, 9, 15),
    ),
    LandmarkPost(
        "science", OTHER_USER.username, FUSION_LINK, "",
        datetime(2025, 2, 14, 13, 0), url="https://research.example.edu/fusion/record-plasma",
    ),
)
