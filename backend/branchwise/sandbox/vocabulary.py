"""Word lists the catalog generator combines into plausible product names and descriptions.

Data only: the generator picks from these with a seeded RNG, so changing a list changes every seeded shop.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum
from types import MappingProxyType


class OptionSet(Enum):
    """Which choices a product offers on its page."""

    NONE = "none"
    COLOR = "color"
    APPAREL = "apparel"  # letter sizes and colors
    SHOES = "shoes"  # numeric shoe sizes and colors
    GLOVES = "gloves"  # S–XL and colors


APPAREL_SIZES: tuple[str, ...] = ("XS", "S", "M", "L", "XL", "XXL")
SHOE_SIZES: tuple[str, ...] = ("6", "6.5", "7", "7.5", "8", "8.5", "9", "9.5", "10", "10.5", "11", "12")
GLOVE_SIZES: tuple[str, ...] = ("S", "M", "L", "XL")


@dataclass(frozen=True)
class NounSpec:
    noun: str
    min_dollars: int
    max_dollars: int
    options: OptionSet = OptionSet.NONE


@dataclass(frozen=True)
class CategorySpec:
    slug: str
    name: str
    sku_prefix: str
    blurb: str
    brand_label: str
    # "{brand}", "{adjective}" and "{noun}" are filled in; books read better as titles than as brand names.
    name_pattern: str
    brands: tuple[str, ...]
    adjectives: tuple[str, ...]
    nouns: tuple[NounSpec, ...]
    colors: tuple[str, ...]
    # Description sentences; "{noun}" is the lower-cased product noun.
    features: tuple[str, ...]
    praise: tuple[str, ...]
    complaints: tuple[str, ...]
    product_count: int


CATEGORIES: tuple[CategorySpec, ...] = (
    CategorySpec(
        slug="electronics",
        name="Electronics",
        sku_prefix="ELE",
        blurb="Headphones, speakers, wearables and the cables that keep them going.",
        brand_label="Brand",
        name_pattern="{brand} {adjective} {noun}",
        brands=("Voltix", "Auralis", "Nimbus", "Kestrel", "Lumora", "Corvid"),
        adjectives=("Pro", "Lite", "Max", "Air", "Compact", "Ultra", "Edge", "Plus"),
        nouns=(
            NounSpec("Wireless Earbuds", 29, 149, OptionSet.COLOR),
            NounSpec("Bluetooth Speaker", 25, 199, OptionSet.COLOR),
            NounSpec("Smartwatch", 79, 349, OptionSet.COLOR),
            NounSpec("Power Bank", 19, 69, OptionSet.COLOR),
            NounSpec("Mechanical Keyboard", 49, 179, OptionSet.COLOR),
            NounSpec("HD Webcam", 39, 129),
            NounSpec("USB-C Hub", 24, 89),
            NounSpec("E-Reader", 89, 249),
            NounSpec("Action Camera", 99, 399),
            NounSpec("Wireless Mouse", 15, 79, OptionSet.COLOR),
        ),
        colors=("Black", "White", "Silver", "Midnight Blue", "Rose Gold", "Graphite"),
        features=(
            "The {noun} pairs in seconds and remembers up to three devices.",
            "A USB-C port charges it fully in about two hours.",
            "Its aluminum shell is light enough to carry every day.",
            "Firmware updates arrive through the free companion app.",
            "Covered by a two-year limited warranty.",
            "Energy-efficient components keep it cool during long sessions.",
        ),
        praise=(
            "Battery life is better than advertised.",
            "Setup took less than five minutes.",
            "The build quality feels premium for the price.",
            "Connection has been rock solid, even across the house.",
            "Sound is crisp and clear.",
        ),
        complaints=(
            "It disconnects every now and then.",
            "The companion app is clunky.",
            "Battery drains faster than I hoped.",
            "The charging cable is very short.",
            "Buttons feel a bit cheap.",
        ),
        product_count=28,
    ),
    CategorySpec(
        slug="home-kitchen",
        name="Home & Kitchen",
        sku_prefix="HOM",
        blurb="Cookware, small appliances and soft furnishings for every room.",
        brand_label="Brand",
        name_pattern="{brand} {adjective} {noun}",
        brands=("Hearthwell", "Copperline", "Oakhaven", "Brightnest", "Kitchara", "Linden & Co."),
        adjectives=("Classic", "Modern", "Everyday", "Premium", "Artisan", "Essential", "Heritage", "Nordic"),
        nouns=(
            NounSpec("Chef's Knife", 25, 129),
            NounSpec("Frying Pan", 22, 89, OptionSet.COLOR),
            NounSpec("Dutch Oven", 49, 249, OptionSet.COLOR),
            NounSpec("Cutting Board", 15, 59),
            NounSpec("Mixing Bowl Set", 19, 65, OptionSet.COLOR),
            NounSpec("Electric Kettle", 29, 99, OptionSet.COLOR),
            NounSpec("Throw Blanket", 24, 89, OptionSet.COLOR),
            NounSpec("Bath Towel Set", 29, 79, OptionSet.COLOR),
            NounSpec("Table Lamp", 35, 149, OptionSet.COLOR),
            NounSpec("Storage Baskets", 18, 49, OptionSet.COLOR),
        ),
        colors=("Charcoal", "Cream", "Sage Green", "Terracotta", "Navy", "Stone Gray"),
        features=(
            "The {noun} is dishwasher safe for easy cleanup.",
            "Made from responsibly sourced materials.",
            "Designed to look as good on display as it does in use.",
            "Backed by a lifetime guarantee against manufacturing defects.",
            "Sized to fit comfortably in small apartments and family kitchens alike.",
            "Each piece is inspected by hand before it ships.",
        ),
        praise=(
            "It looks beautiful on the counter.",
            "Cleans up in no time.",
            "Sturdy and well balanced.",
            "The color is exactly as pictured.",
            "Use it almost every day.",
        ),
        complaints=(
            "It arrived with a small scratch.",
            "Smaller than I expected.",
            "The finish started to wear after a month.",
            "Heavier than it looks.",
            "The instructions were confusing.",
        ),
        product_count=28,
    ),
    CategorySpec(
        slug="books",
        name="Books",
        sku_prefix="BOO",
        blurb="Novels, mysteries and page-turners from independent presses.",
        brand_label="Author",
        name_pattern="The {adjective} {noun}",
        brands=(
            "Mara Ellison",
            "Theo Bramwell",
            "Ines Okafor",
            "Rafael Quint",
            "June Hartley",
            "Samir Vance",
            "Clara Whitfield",
            "Oskar Lindqvist",
        ),
        adjectives=(
            "Silent",
            "Hidden",
            "Forgotten",
            "Last",
            "Midnight",
            "Golden",
            "Distant",
            "Paper",
            "Winter",
            "Salt",
            "Glass",
            "Borrowed",
        ),
        nouns=(
            NounSpec("Harbor", 9, 28),
            NounSpec("Cartographer", 12, 30),
            NounSpec("Lighthouse", 9, 26),
            NounSpec("Archive", 12, 32),
            NounSpec("River", 8, 24),
            NounSpec("Kingdom", 10, 29),
            NounSpec("Letters", 9, 25),
            NounSpec("Observatory", 13, 34),
            NounSpec("Tide", 8, 22),
            NounSpec("Atlas", 11, 30),
        ),
        colors=(),
        features=(
            "A gripping literary mystery that unfolds over one long winter.",
            "An award-winning novel about family, memory and the sea.",
            "A fast-paced thriller that keeps the twists coming to the final page.",
            "A warm, funny story of an unlikely friendship in a small coastal town.",
            "A sweeping historical epic spanning three generations.",
            "Includes a reading group guide and an interview with the author.",
        ),
        praise=(
            "I could not put it down.",
            "The characters stayed with me for weeks.",
            "Beautifully written.",
            "The ending was perfect.",
            "Great pick for our book club.",
        ),
        complaints=(
            "The middle section drags.",
            "I guessed the twist early on.",
            "Too many characters to keep track of.",
            "The ending felt rushed.",
            "The print is quite small.",
        ),
        product_count=26,
    ),
    CategorySpec(
        slug="clothing",
        name="Clothing",
        sku_prefix="CLO",
        blurb="Everyday basics and outerwear in sizes XS to XXL.",
        brand_label="Brand",
        name_pattern="{brand} {adjective} {noun}",
        brands=("Northwind", "Fieldnote", "Cotton & Pine", "Harbor Thread", "Urbanloom", "Sablewood"),
        adjectives=("Classic", "Relaxed", "Slim", "Essential", "Lightweight", "Heritage", "Everyday", "Premium"),
        nouns=(
            NounSpec("T-Shirt", 14, 39, OptionSet.APPAREL),
            NounSpec("Hoodie", 35, 89, OptionSet.APPAREL),
            NounSpec("Chino Pants", 39, 89, OptionSet.APPAREL),
            NounSpec("Denim Jacket", 59, 139, OptionSet.APPAREL),
            NounSpec("Flannel Shirt", 29, 69, OptionSet.APPAREL),
            NounSpec("Crewneck Sweater", 39, 119, OptionSet.APPAREL),
            NounSpec("Rain Jacket", 59, 179, OptionSet.APPAREL),
            NounSpec("Joggers", 29, 69, OptionSet.APPAREL),
            NounSpec("Polo Shirt", 24, 59, OptionSet.APPAREL),
            NounSpec("Canvas Sneakers", 39, 99, OptionSet.SHOES),
        ),
        colors=("Black", "White", "Navy", "Heather Gray", "Olive", "Burgundy", "Sand"),
        features=(
            "Cut from soft, breathable fabric that holds its shape wash after wash.",
            "The {noun} has a true-to-size fit; size up for a looser look.",
            "Machine washable on cold.",
            "Reinforced seams for everyday wear.",
            "Made in a fair-trade certified factory.",
            "Pre-shrunk so it fits the same after the first wash.",
        ),
        praise=(
            "Fits perfectly.",
            "The fabric is so soft.",
            "Held up well after many washes.",
            "Bought it in two more colors.",
            "Looks more expensive than it is.",
        ),
        complaints=(
            "Runs a size small.",
            "The color faded after a few washes.",
            "Sleeves are a little long.",
            "Thinner material than I expected.",
            "A seam came loose after a month.",
        ),
        product_count=28,
    ),
    CategorySpec(
        slug="sports-outdoors",
        name="Sports & Outdoors",
        sku_prefix="SPO",
        blurb="Gear for trails, gyms, campsites and everything in between.",
        brand_label="Brand",
        name_pattern="{brand} {adjective} {noun}",
        brands=("Summit", "Trailcraft", "Ridgeback", "Altura", "Pinecrest", "Velo"),
        adjectives=("Trail", "Pro", "Ultralight", "All-Weather", "Expedition", "Performance", "Compact", "Classic"),
        nouns=(
            NounSpec("Hiking Backpack", 39, 189, OptionSet.COLOR),
            NounSpec("Yoga Mat", 19, 79, OptionSet.COLOR),
            NounSpec("Running Shoes", 59, 159, OptionSet.SHOES),
            NounSpec("Camping Tent", 89, 399),
            NounSpec("Sleeping Bag", 49, 229, OptionSet.COLOR),
            NounSpec("Trekking Poles", 29, 119),
            NounSpec("Resistance Bands Set", 12, 39),
            NounSpec("Cycling Gloves", 15, 45, OptionSet.GLOVES),
            NounSpec("Headlamp", 14, 59, OptionSet.COLOR),
            NounSpec("Insulated Water Bottle", 15, 45, OptionSet.COLOR),
        ),
        colors=("Forest Green", "Slate Gray", "Burnt Orange", "Black", "Glacier Blue", "Sand"),
        features=(
            "Water-resistant fabric shrugs off rain and spilled drinks.",
            "The {noun} packs down small for travel.",
            "Reflective details help you stay visible at dusk.",
            "Tested on trails from the Rockies to the Alps.",
            "Lightweight without giving up durability.",
            "Comes with a one-year no-questions-asked return policy.",
        ),
        praise=(
            "Survived a week of hiking without a scratch.",
            "Very comfortable for long days out.",
            "Light and easy to pack.",
            "Great quality for the price.",
            "Kept me dry in a downpour.",
        ),
        complaints=(
            "The zipper sticks.",
            "Not as waterproof as claimed.",
            "Straps dig in on long hikes.",
            "Smells strongly of rubber at first.",
            "Heavier than the listing suggests.",
        ),
        product_count=28,
    ),
    CategorySpec(
        slug="toys-games",
        name="Toys & Games",
        sku_prefix="TOY",
        blurb="Puzzles, board games and building sets for all ages.",
        brand_label="Brand",
        name_pattern="{brand} {adjective} {noun}",
        brands=("Puzzlewood", "Brickford", "Little Comet", "Tumbletown", "Starfort", "Marble & Moss"),
        adjectives=("Deluxe", "Classic", "Junior", "Family", "Magnetic", "Wooden", "Giant", "Travel"),
        nouns=(
            NounSpec("Building Blocks Set", 19, 89),
            NounSpec("Jigsaw Puzzle", 12, 35),
            NounSpec("Strategy Board Game", 24, 69),
            NounSpec("Plush Bear", 12, 39, OptionSet.COLOR),
            NounSpec("Card Game", 8, 24),
            NounSpec("Train Set", 39, 149),
            NounSpec("Stunt Kite", 15, 49, OptionSet.COLOR),
            NounSpec("Science Kit", 19, 59),
            NounSpec("Dollhouse", 59, 189),
            NounSpec("Marble Run", 24, 79),
        ),
        colors=("Red", "Sky Blue", "Sunshine Yellow", "Mint", "Lavender"),
        features=(
            "Recommended for ages 6 and up.",
            "The {noun} is made from non-toxic, child-safe materials.",
            "Great for family game nights and rainy afternoons.",
            "Encourages creativity, problem solving and teamwork.",
            "Everything stores neatly back in the sturdy box.",
            "Includes illustrated instructions in five languages.",
        ),
        praise=(
            "My kids play with it every day.",
            "Hours of fun for the whole family.",
            "Sturdy pieces that survive rough play.",
            "A hit at the birthday party.",
            "Easy to learn, hard to put down.",
        ),
        complaints=(
            "A couple of pieces were missing.",
            "The box arrived crushed.",
            "Too easy for older kids.",
            "The instructions are hard to follow.",
            "Paint chipped quickly.",
        ),
        product_count=26,
    ),
    CategorySpec(
        slug="beauty",
        name="Beauty",
        sku_prefix="BEA",
        blurb="Skincare, haircare and makeup made with gentle ingredients.",
        brand_label="Brand",
        name_pattern="{brand} {adjective} {noun}",
        brands=("Velvetleaf", "Dewbloom", "Purely Fern", "Solace", "Maison Rue", "Clearbrook"),
        adjectives=(
            "Hydrating",
            "Gentle",
            "Nourishing",
            "Daily",
            "Brightening",
            "Soothing",
            "Fragrance-Free",
            "Revitalizing",
        ),
        nouns=(
            NounSpec("Face Moisturizer", 14, 58),
            NounSpec("Cleansing Gel", 9, 32),
            NounSpec("Lip Balm", 4, 14),
            NounSpec("Mineral Sunscreen", 12, 36),
            NounSpec("Hair Mask", 12, 38),
            NounSpec("Body Lotion", 9, 29),
            NounSpec("Eye Cream", 18, 64),
            NounSpec("Shampoo", 8, 28),
            NounSpec("Nail Polish", 7, 18, OptionSet.COLOR),
            NounSpec("Lipstick", 12, 34, OptionSet.COLOR),
        ),
        colors=("Rosewood", "Coral", "Classic Red", "Nude", "Berry", "Plum"),
        features=(
            "Dermatologist tested and suitable for sensitive skin.",
            "The {noun} is free from parabens, sulfates and synthetic dyes.",
            "Never tested on animals.",
            "Packaged in recyclable glass and aluminum.",
            "A little goes a long way: one bottle lasts about three months.",
            "Made with shea butter, aloe and vitamin E.",
        ),
        praise=(
            "My skin has never felt better.",
            "Absorbs quickly without feeling greasy.",
            "Lovely, subtle scent.",
            "Lasts all day.",
            "Gentle enough for my sensitive skin.",
        ),
        complaints=(
            "Broke me out after a week.",
            "The pump stopped working.",
            "Scent is stronger than I like.",
            "Did not notice much difference.",
            "Tiny bottle for the price.",
        ),
        product_count=28,
    ),
    CategorySpec(
        slug="garden",
        name="Garden",
        sku_prefix="GAR",
        blurb="Tools, planters and outdoor lighting for gardens big and small.",
        brand_label="Brand",
        name_pattern="{brand} {adjective} {noun}",
        brands=("Greenfold", "Rootstock", "Meadowlark", "Terrabloom", "Fernhill", "Hedgerow"),
        adjectives=(
            "Heavy-Duty",
            "Ergonomic",
            "Weatherproof",
            "Compact",
            "Classic",
            "Deluxe",
            "Professional",
            "Lightweight",
        ),
        nouns=(
            NounSpec("Pruning Shears", 14, 49),
            NounSpec("Expandable Garden Hose", 24, 79, OptionSet.COLOR),
            NounSpec("Raised Garden Bed", 59, 199),
            NounSpec("Watering Can", 14, 45, OptionSet.COLOR),
            NounSpec("Planter Pot", 12, 69, OptionSet.COLOR),
            NounSpec("Gardening Gloves", 9, 29, OptionSet.GLOVES),
            NounSpec("Bird Feeder", 15, 59),
            NounSpec("Compost Bin", 39, 129),
            NounSpec("Solar Path Lights", 19, 79),
            NounSpec("Trowel and Fork Set", 12, 39),
        ),
        colors=("Moss Green", "Terracotta", "Charcoal", "Sky Blue", "White"),
        features=(
            "Rust-resistant steel and UV-stable plastics last season after season.",
            "The {noun} has a comfortable, non-slip grip.",
            "Built to handle sun, frost and everything in between.",
            "Assembles in minutes with no tools required.",
            "Backed by a five-year warranty.",
            "Designed with a community of allotment gardeners.",
        ),
        praise=(
            "Makes garden chores so much easier.",
            "Survived a whole winter outside.",
            "Solid and well made.",
            "Looks great on the patio.",
            "Easy to assemble.",
        ),
        complaints=(
            "The handle cracked in the first season.",
            "Faded in the sun.",
            "Smaller than it looks in the photos.",
            "Assembly took much longer than promised.",
            "Rusted after a few weeks.",
        ),
        product_count=28,
    ),
)


# Review authors are shown as "First L." like most shops do.
REVIEWER_FIRST_NAMES: tuple[str, ...] = (
    "Priya", "Marcus", "Hannah", "Diego", "Aisha", "Tom", "Sofia", "Kenji", "Olivia", "Noah",
    "Fatima", "Lucas", "Grace", "Mateo", "Chloe", "Ethan", "Amara", "Ben", "Yuki", "Isabel",
    "Daniel", "Leila", "Owen", "Nadia", "Sam", "Rosa", "Jamal", "Elena", "Felix", "Maya",
)
REVIEWER_INITIALS = "ABCDEFGHJKLMNPRSTVWY"

REVIEW_TITLES: Mapping[int, tuple[str, ...]] = MappingProxyType({
    5: ("Absolutely love it", "Exceeded my expectations", "Worth every penny", "Five stars", "Best purchase this year"),
    4: ("Very good", "Great value", "Solid choice", "Happy with it", "Would recommend"),
    3: ("Decent but not perfect", "It's okay", "Mixed feelings", "Does the job"),
    2: ("Disappointed", "Not as described", "Expected more", "Meh"),
    1: ("Would not buy again", "Fell apart quickly", "Waste of money", "Very poor"),
})

REVIEW_OPENINGS: Mapping[int, tuple[str, ...]] = MappingProxyType({
    5: ("I'm really impressed.", "This is fantastic.", "Couldn't be happier."),
    4: ("Pretty great overall.", "Good purchase.", "Mostly very happy."),
    3: ("It's fine.", "Some good, some bad.", "Average, honestly."),
    2: ("Not great.", "I wanted to like this.", "Pretty underwhelming."),
    1: ("Really disappointed.", "Avoid.", "This was a mistake."),
})

REVIEW_CLOSINGS: Mapping[int, tuple[str, ...]] = MappingProxyType({
    5: ("Highly recommend!", "Already ordered another as a gift.", "Five stars from me."),
    4: ("Would buy again.", "Recommended.", "Good value overall."),
    3: ("Okay for the price.", "Might look elsewhere next time.", "Not bad, not amazing."),
    2: ("Probably returning it.", "Can't really recommend it.", "Expected better."),
    1: ("Returned it.", "Save your money.", "Never again."),
})
