"""Hand-written products that exist in every seeded shop, whatever the seed.

Demos and agent tasks can name these ("add the Summit backpack in Burnt Orange to the cart"). Each one also covers an
edge case: low stock, out of stock, no reviews, exactly one review, many sizes. Tests should still read ids, prices and
stock from the database through `ShopQueries` rather than copy them from here.
"""

from __future__ import annotations

from dataclasses import dataclass

from .vocabulary import APPAREL_SIZES


@dataclass(frozen=True)
class LandmarkProduct:
    category_slug: str
    name: str
    brand: str
    price_cents: int
    stock: int
    description: str
    review_count: int
    # Mean of the generated review ratings is steered towards this.
    quality: float
    sizes: tuple[str, ...] = ()
    colors: tuple[str, ...] = ()


HEADPHONES = "Auralis ANC-700 Wireless Headphones"
TSHIRT = "Northwind Everyday Organic Cotton T-Shirt"
BACKPACK = "Summit Trail 40L Hiking Backpack"
COFFEE_MAKER = "Copperline 10-Cup Programmable Coffee Maker"
NOVEL_WITHOUT_REVIEWS = "The Quiet Orchard"
SOLD_OUT_BOTTLE = "Trailcraft Glacier Insulated Water Bottle"
SUNSCREEN_ONE_REVIEW = "Dewbloom Daily Mineral Sunscreen SPF 30"
BUILDING_SET = "Brickford Harbor Town Building Set"
HERB_PLANTER = "Rootstock Self-Watering Herb Planter"

LANDMARKS: tuple[LandmarkProduct, ...] = (
    LandmarkProduct(
        category_slug="electronics",
        name=HEADPHONES,
        brand="Auralis",
        price_cents=14999,
        stock=25,
        description=(
            "Over-ear headphones with adaptive noise cancelling and 40 hours of battery life. "
            "Memory-foam ear cushions stay comfortable on long flights, "
            "and a quick 10-minute charge gives 5 hours of play."
        ),
        review_count=12,
        quality=4.5,
        colors=("Black", "Silver", "Midnight Blue"),
    ),
    LandmarkProduct(
        category_slug="clothing",
        name=TSHIRT,
        brand="Northwind",
        price_cents=1950,
        stock=80,
        description=(
            "A relaxed crew-neck tee in soft, certified organic cotton. "
            "Pre-shrunk and garment-dyed so it keeps its color and fit."
        ),
        review_count=8,
        quality=4.2,
        sizes=APPAREL_SIZES,
        colors=("White", "Black", "Heather Gray", "Navy"),
    ),
    LandmarkProduct(
        category_slug="sports-outdoors",
        name=BACKPACK,
        brand="Summit",
        price_cents=8900,
        stock=14,
        description=(
            "A 40-liter trekking pack with an adjustable back system, hip-belt pockets and a built-in rain cover. "
            "Fits a 3-liter hydration bladder."
        ),
        review_count=6,
        quality=4.6,
        colors=("Forest Green", "Slate Gray", "Burnt Orange"),
    ),
    LandmarkProduct(
        category_slug="home-kitchen",
        name=COFFEE_MAKER,
        brand="Copperline",
        price_cents=7995,
        stock=3,
        description=(
            "Brews up to ten cups with a programmable 24-hour timer, a keep-warm plate and a reusable gold-tone filter."
        ),
        review_count=5,
        quality=3.9,
        colors=("Black", "Brushed Steel"),
    ),
    LandmarkProduct(
        category_slug="books",
        name=NOVEL_WITHOUT_REVIEWS,
        brand="Mara Ellison",
        price_cents=1499,
        stock=40,
        description=(
            "Mara Ellison's debut novel: two estranged sisters return to their late father's apple orchard and "
            "uncover the secret he kept for forty years."
        ),
        review_count=0,
        quality=4.0,
    ),
    LandmarkProduct(
        category_slug="sports-outdoors",
        name=SOLD_OUT_BOTTLE,
        brand="Trailcraft",
        price_cents=2499,
        stock=0,
        description=(
            "A 750 ml double-walled stainless steel bottle that keeps drinks cold for 24 hours or hot for 12."
        ),
        review_count=4,
        quality=4.4,
        colors=("Glacier Blue", "Black", "Sand"),
    ),
    LandmarkProduct(
        category_slug="beauty",
        name=SUNSCREEN_ONE_REVIEW,
        brand="Dewbloom",
        price_cents=1800,
        stock=60,
        description="A lightweight zinc-oxide sunscreen that leaves no white cast. Reef-friendly and fragrance-free.",
        review_count=1,
        quality=5.0,
    ),
    LandmarkProduct(
        category_slug="toys-games",
        name=BUILDING_SET,
        brand="Brickford",
        price_cents=6499,
        stock=18,
        description=(
            "A 1,200-piece harbor town with a lighthouse, fish market and working drawbridge. Ages 8 and up."
        ),
        review_count=9,
        quality=4.7,
    ),
    LandmarkProduct(
        category_slug="garden",
        name=HERB_PLANTER,
        brand="Rootstock",
        price_cents=3450,
        stock=22,
        description=(
            "A self-watering planter with three pockets for kitchen herbs and a water-level window. "
            "Holds enough water for up to two weeks."
        ),
        review_count=7,
        quality=4.1,
        colors=("Terracotta", "Sage", "White"),
    ),
)
