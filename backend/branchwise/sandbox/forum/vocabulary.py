"""Word lists the forum generator combines into plausible forums, posts and comments.

Data only: the generator picks from these with a seeded RNG, so changing a list changes every seeded forum.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ForumSpec:
    name: str
    title: str
    description: str
    # Things people post about there; titles and comments are built around them.
    subjects: tuple[str, ...]
    # How busy the forum is, relative to the others (posts are drawn in proportion).
    activity: int = 3


FORUMS: tuple[ForumSpec, ...] = (
    ForumSpec("books", "Books", "Discussion of books, authors and reading habits. No piracy links.",
              ("The Left Hand of Darkness", "Middlemarch", "audiobooks", "a library card", "Pride and Prejudice",
               "Piranesi", "the Discworld series", "reading challenges", "used bookshops", "Dune"), 5),
    ForumSpec("movies", "Movies", "News and discussion about films, old and new.",
              ("Oppenheimer", "the Criterion Collection", "a director's cut", "Spirited Away", "silent films",
               "film scores", "Casablanca", "movie theatres", "the Godfather trilogy"), 5),
    ForumSpec("gaming", "Gaming", "Video games on every platform: news, reviews and questions.",
              ("Elden Ring", "the Steam Deck", "Stardew Valley", "speedrunning", "retro consoles", "Hades",
               "couch co-op games", "Zelda: Tears of the Kingdom", "game preservation"), 5),
    ForumSpec("technology", "Technology", "The technology industry, gadgets and the internet.",
              ("USB-C", "right to repair", "e-readers", "home routers", "open source firmware", "password managers",
               "mechanical keyboards", "smart thermostats"), 4),
    ForumSpec("science", "Science", "Peer-reviewed research and the people who do it.",
              ("CRISPR", "the James Webb telescope", "tardigrades", "fusion energy", "octopus intelligence",
               "sleep research", "microplastics", "gravitational waves"), 4),
    ForumSpec("space", "Space", "Rockets, planets, telescopes and everything beyond the sky.",
              ("the Artemis program", "Europa", "Starship", "the Voyager probes", "exoplanets", "the ISS",
               "Mars sample return", "a total solar eclipse"), 3),
    ForumSpec("history", "History", "Ask and answer questions about the past.",
              ("the Roman aqueducts", "the Hanseatic League", "the printing press", "the Silk Road",
               "medieval monasteries", "the Apollo 13 mission", "the Library of Alexandria"), 3),
    ForumSpec("music", "Music", "Albums, artists, gear and concerts.",
              ("vinyl records", "Kind of Blue", "music theory", "live albums", "Radiohead", "film soundtracks",
               "a cheap acoustic guitar", "Bach's cello suites"), 4),
    ForumSpec("cooking", "Cooking", "Recipes, techniques and kitchen questions for home cooks.",
              ("sourdough starter", "cast iron pans", "homemade pasta", "a chef's knife", "weeknight curry",
               "risotto", "fermented hot sauce", "meal prep"), 4),
    ForumSpec("baking", "Baking", "Bread, cakes, pastry and the science of the oven.",
              ("croissants", "banana bread", "a stand mixer", "pie crust", "focaccia", "macarons"), 2),
    ForumSpec("gardening", "Gardening", "Vegetables, flowers, houseplants and compost.",
              ("tomato blight", "raised beds", "a compost bin", "monstera cuttings", "garlic", "native wildflowers",
               "fig trees"), 3),
    ForumSpec("diy", "Do It Yourself", "Home improvement, repairs and projects you built yourself.",
              ("a leaky faucet", "drywall patches", "a workbench", "deck staining", "a cordless drill",
               "tiling a bathroom", "a bookshelf"), 3),
    ForumSpec("personalfinance", "Personal Finance", "Budgeting, saving, debt and retirement questions.",
              ("an emergency fund", "index funds", "a first budget", "credit card debt", "a high-yield savings account",
               "a Roth IRA", "student loans"), 4),
    ForumSpec("fitness", "Fitness", "Training, running, lifting and staying healthy.",
              ("a couch to 5k plan", "deadlifts", "rest days", "a home gym", "marathon training", "protein intake",
               "stretching routines"), 4),
    ForumSpec("running", "Running", "For runners of every pace.",
              ("trail shoes", "a first half marathon", "interval training", "running in winter", "shin splints"), 2),
    ForumSpec("travel", "Travel", "Trip reports, itineraries and travel questions.",
              ("Lisbon", "the Japan Rail Pass", "a carry-on only trip", "Iceland's Ring Road", "night trains",
               "travel insurance", "Kyoto"), 4),
    ForumSpec("photography", "Photography", "Cameras, lenses, technique and critique.",
              ("a 50mm lens", "film cameras", "golden hour", "street photography", "Lightroom presets",
               "a used mirrorless camera"), 3),
    ForumSpec("programming", "Programming", "Computer programming: languages, tools and careers.",
              ("Rust", "code reviews", "Python type hints", "SQLite", "Vim keybindings", "technical interviews",
               "a first open source contribution", "regular expressions"), 5),
    ForumSpec("linux", "Linux", "GNU/Linux distributions, desktops and the command line.",
              ("Arch Linux", "systemd", "a tiling window manager", "dotfiles", "Debian stable", "Wayland"), 3),
    ForumSpec("dataisbeautiful", "Data Is Beautiful", "Visualisations of data: charts, maps and graphs.",
              ("a map of rainfall", "population pyramids", "a chart of housing prices", "a Sankey diagram",
               "commute times"), 2),
    ForumSpec("askscience", "Ask Science", "Questions about the natural world, answered by people who know.",
              ("why the sky is blue", "how vaccines work", "black holes", "why cats purr", "ocean tides"), 3),
    ForumSpec("explainlikeimfive", "Explain Like I'm Five", "Simple explanations of complicated things.",
              ("inflation", "how Wi-Fi works", "compound interest", "jet lag", "how noise cancelling works"), 3),
    ForumSpec("todayilearned", "Today I Learned", "Interesting facts you just found out, with a source.",
              ("honey never spoils", "octopuses have three hearts", "the shortest war in history",
               "Scotland's national animal", "why Venice has canals"), 4),
    ForumSpec("news", "News", "Current events from reputable sources.",
              ("a city budget vote", "a new rail line", "a heat wave", "public library funding",
               "a bridge closure"), 4),
    ForumSpec("worldnews", "World News", "Major news from around the world.",
              ("a climate summit", "a trade agreement", "election results", "a wildfire season",
               "a space launch"), 4),
    ForumSpec("boston", "Boston", "News, events and questions for the Boston area.",
              ("the T", "the Public Garden", "Fenway Park", "Harvard Square", "the Freedom Trail"), 2),
    ForumSpec("pittsburgh", "Pittsburgh", "Everything about the city of bridges.",
              ("the Strip District", "the inclines", "Primanti Bros.", "the Carnegie Museums", "Schenley Park"), 2),
    ForumSpec("nyc", "New York City", "For New Yorkers and visitors to the five boroughs.",
              ("the subway", "Central Park", "bagels", "the High Line", "rent prices"), 3),
    ForumSpec("boardgames", "Board Games", "Tabletop games: reviews, rules questions and game nights.",
              ("Catan", "Wingspan", "a game night", "Gloomhaven", "card sleeves", "Ticket to Ride"), 2),
    ForumSpec("coffee", "Coffee", "Beans, brewing and the daily cup.",
              ("a pour-over", "an espresso machine", "a burr grinder", "cold brew", "light roasts"), 2),
    ForumSpec("cats", "Cats", "Pictures, stories and advice about cats.",
              ("a rescue kitten", "scratching posts", "a cat that hates the vet", "wet food", "a senior cat"), 2),
    ForumSpec("dogs", "Dogs", "All about dogs: training, health and photos.",
              ("leash training", "a rescue greyhound", "puppy teeth", "dog parks", "a fear of thunderstorms"), 2),
)

TITLE_TEMPLATES: tuple[str, ...] = (
    "What's your honest opinion of {subject}?",
    "Finally tried {subject} and I get the hype now",
    "Looking for advice about {subject}",
    "Is {subject} worth it in 2025?",
    "Unpopular opinion: {subject} is overrated",
    "A beginner's guide to {subject}",
    "Does anyone else have strong feelings about {subject}?",
    "I spent a year with {subject}. Here is what I learned",
    "Recommendations similar to {subject}?",
    "Quick question about {subject}",
    "The history of {subject} is fascinating",
    "What nobody tells you about {subject}",
    "Weekly discussion thread: {subject}",
    "Help! Problem with {subject}",
    "Why is {subject} so hard to get right?",
)

LINK_TITLE_TEMPLATES: tuple[str, ...] = (
    "New study looks at {subject}",
    "An in-depth article on {subject}",
    "Interview: the people behind {subject}",
    "Report: what changed with {subject} this year",
    "{subject}, explained in ten minutes",
)

LINK_DOMAINS: tuple[str, ...] = (
    "news.example.org", "dailyledger.example.com", "thewire.example.net", "longreads.example.com",
    "research.example.edu", "citypaper.example.org",
)

BODY_OPENERS: tuple[str, ...] = (
    "I have been thinking about {subject} for a while now.",
    "Long time lurker, first post here.",
    "So this weekend I finally got around to {subject}.",
    "A friend recommended {subject} to me last month.",
    "This might be a silly question, but bear with me.",
    "After a lot of reading I am still unsure about {subject}.",
)

BODY_MIDDLES: tuple[str, ...] = (
    "Most of what I found online was either outdated or trying to sell me something.",
    "It went better than expected, although the first attempt was a disaster.",
    "My main worry is the time it takes, since I work full time.",
    "Everyone in my circle seems to have a different opinion about it.",
    "I kept notes the whole way and I am happy to share them if anyone is interested.",
    "The cost was reasonable, but the learning curve was steeper than I thought.",
)

BODY_CLOSERS: tuple[str, ...] = (
    "What would you do in my place?",
    "Curious to hear your experiences.",
    "Any tips are appreciated!",
    "Thanks in advance, this community has always been helpful.",
    "Did I miss anything important?",
)

COMMENTS: tuple[str, ...] = (
    "Great write-up, thanks for sharing.",
    "I had the exact same experience with {subject}.",
    "Strongly disagree. {subject} was the best decision I made this year.",
    "Could you share a source for that?",
    "This is the kind of post I come here for.",
    "Honestly it depends on your budget and how much time you have.",
    "Saving this thread for later.",
    "I tried {subject} twice and gave up both times, so good luck!",
    "The FAQ in the sidebar covers most of this, but the second point is new to me.",
    "Came here to say this.",
    "Did you end up going with it in the end?",
    "My partner is obsessed with {subject}, I will show them this.",
    "Underrated comment right here.",
    "Not sure I agree, but I appreciate the detail.",
    "Wait until you discover the rest of the community around {subject}.",
    "Has anyone compared this with last year?",
    "Thank you, this answered my question.",
    "Upvoted for the clear explanation.",
)

USERNAME_FIRST: tuple[str, ...] = (
    "quiet", "lucky", "rusty", "sunny", "clever", "wandering", "midnight", "amber", "silver", "cosmic", "humble",
    "curious", "salty", "velvet", "electric", "lazy", "brave", "gentle", "urban", "northern",
)

USERNAME_SECOND: tuple[str, ...] = (
    "otter", "falcon", "teapot", "walrus", "maple", "pixel", "badger", "comet", "lantern", "heron", "pretzel",
    "sparrow", "kettle", "panda", "tractor", "violin", "cactus", "raven",
)

BIOGRAPHIES: tuple[str, ...] = (
    "", "", "Here for the discussions.", "Reader, cook, occasional runner.", "Mostly lurking.",
    "I like long threads and short answers.", "Weekend photographer.",
)
