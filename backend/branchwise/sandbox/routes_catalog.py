"""Browsing: home page, search, category listings and product pages. All GET, none of them change state."""

# No `from __future__ import annotations`: FastAPI must see the real annotations, and the dependency aliases
# (VisitDep and friends) are local to build_router, where string annotations could not be resolved.

from typing import Annotated

from fastapi import APIRouter, Depends, Query
from fastapi.responses import HTMLResponse

from .catalog import SortOrder
from .context import ShopContext
from .models import Product
from .pagination import paginate
from .visit import Visit

FEATURED_COUNT = 8
TOP_RATED_COUNT = 8
TOP_RATED_MIN_REVIEWS = 5


def build_router(ctx: ShopContext) -> APIRouter:
    router = APIRouter()
    page_size = ctx.config.page_size
    VisitDep = Annotated[Visit, Depends(ctx.visit)]

    @router.get("/", response_class=HTMLResponse)
    def home(visit: VisitDep) -> HTMLResponse:
        return visit.render(
            "home.html",
            featured=visit.catalog.featured(FEATURED_COUNT),
            top_rated=visit.catalog.top_rated(TOP_RATED_COUNT, TOP_RATED_MIN_REVIEWS),
        )

    @router.get("/search", response_class=HTMLResponse)
    def search(
        visit: VisitDep,
        q: Annotated[str, Query(max_length=200)] = "",
        sort: str = "",
        page: int = 1,
    ) -> HTMLResponse:
        query = " ".join(q.split())
        order = SortOrder.parse(sort)
        results = visit.catalog.search_page(query, order, page, page_size)
        return visit.render(
            "search.html",
            query=query,
            sort=order,
            sort_orders=tuple(SortOrder),
            results=results,
            pagination=paginate("/search", (("q", query), ("sort", _sort_param(order))), results),
        )

    @router.get("/category/{slug}", response_class=HTMLResponse)
    def category(visit: VisitDep, slug: str, sort: str = "", page: int = 1) -> HTMLResponse:
        found = visit.catalog.category(slug)
        if found is None:
            return visit.not_found("We could not find that category.")
        order = SortOrder.parse(sort)
        results = visit.catalog.category_page(slug, order, page, page_size)
        return visit.render(
            "category.html",
            current_category=slug,
            category=found,
            sort=order,
            sort_orders=tuple(SortOrder),
            results=results,
            pagination=paginate(f"/category/{slug}", (("sort", _sort_param(order)),), results),
        )

    @router.get("/product/{product_id}", response_class=HTMLResponse)
    def product(visit: VisitDep, product_id: int) -> HTMLResponse:
        found = visit.catalog.product(product_id)
        if found is None:
            return visit.not_found("We could not find that product.")
        return render_product(visit, found)

    return router


def _sort_param(order: SortOrder) -> str:
    """Links leave the default order out so URLs stay short."""
    return "" if order is SortOrder.FEATURED else order.value


def render_product(
    visit: Visit,
    product: Product,
    error: str | None = None,
    size: str = "",
    color: str = "",
    quantity: int = 1,
    status_code: int = 200,
) -> HTMLResponse:
    """The product page; the cart re-renders it with the shopper's choices when adding fails."""
    return visit.render(
        "product.html",
        status_code=status_code,
        current_category=product.category_slug,
        product=product,
        reviews=visit.catalog.reviews(product.id),
        error=error,
        chosen_size=size,
        chosen_color=color,
        quantity=quantity,
    )
