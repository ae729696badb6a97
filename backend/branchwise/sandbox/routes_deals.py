"""The "Deals of the moment" page: GET only, and different on every load (see `deals.py`)."""

# No `from __future__ import annotations`: FastAPI must see the real annotations, and the dependency aliases
# (VisitDep and friends) are local to build_router, where string annotations could not be resolved.

from typing import Annotated

from fastapi import APIRouter, Depends
from fastapi.responses import HTMLResponse

from .context import ShopContext
from .deals import DEALS_HEADING, DEALS_PATH, FEATURED_DEAL_PREFIX, deal_order, deal_window
from .visit import Visit


def build_router(ctx: ShopContext) -> APIRouter:
    router = APIRouter()
    VisitDep = Annotated[Visit, Depends(ctx.visit)]

    @router.get(DEALS_PATH, response_class=HTMLResponse)
    def deals(visit: VisitDep) -> HTMLResponse:
        order = deal_order(visit.catalog.stock_levels(), ctx.config.seed)
        products = visit.catalog.products(deal_window(order, ctx.deals.next_load()))
        return visit.render(
            "deals.html",
            heading=DEALS_HEADING,
            featured_prefix=FEATURED_DEAL_PREFIX,
            featured=products[0] if products else None,
            more=products[1:],
        )

    return router
