"""The demo's task on the sandbox shop."""

DEMO_TASK = "What is the price of the cheapest product in the Garden category?"


def demo_start_url(shop_base_url: str) -> str:
    return shop_base_url.rstrip("/") + "/"
