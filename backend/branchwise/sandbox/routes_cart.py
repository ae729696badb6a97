"""The cart page and its state changes (add, update quantity, remove), each a POST that redirects back."""

# No `from __future__ import annotations`: FastAPI must see the real annotations, and the dependency aliases
# (VisitDep and friends) are local to build_router, where string annotations could not be resolved.

from enum import Enum
from types import MappingProxyType
from typing import Annotated

from fastapi import APIRouter, Depends
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from .carts import MAX_LINE_QUANTITY, CartError, QuantityChange
from .context import ShopContext
from .forms import FormData, read_form
from .models import Cart
from .pricing import STANDARD_SHIPPING
from .routes_catalog import render_product
from .visit import Visit


class CartNotice(str, Enum):
    """Outcome of the last cart change, carried in the redirect URL so the GET page can say what happened."""

    ADDED = "added"
    LIMITED = "limited"
    UPDATED = "updated"
    REMOVED = "removed"
    NOT_FOUND = "not-found"
    BAD_QUANTITY = "bad-quantity"


def notice_text(notice: CartNotice, cart: Cart, line_id: int | None) -> str:
    name = next((line.product_name for line in cart.lines if line.id == line_id), "The item")
    return {
        CartNotice.ADDED: f"Added {name} to your cart.",
        CartNotice.LIMITED: f"Only limited stock is available: your cart now holds all we have of {name}.",
        CartNotice.UPDATED: f"Updated the quantity of {name}.",
        CartNotice.REMOVED: "Removed the item from your cart.",
        CartNotice.NOT_FOUND: "That item is no longer in your cart.",
        CartNotice.BAD_QUANTITY: "Enter the quantity as a whole number.",
    }[notice]


_CHANGE_NOTICES = MappingProxyType({
    QuantityChange.UPDATED: CartNotice.UPDATED,
    QuantityChange.LIMITED: CartNotice.LIMITED,
    QuantityChange.REMOVED: CartNotice.REMOVED,
    QuantityChange.NOT_FOUND: CartNotice.NOT_FOUND,
})


def build_router(ctx: ShopContext) -> APIRouter:
    router = APIRouter()
    VisitDep = Annotated[Visit, Depends(ctx.visit)]
    FormDep = Annotated[FormData, Depends(read_form)]

    @router.get("/cart", response_class=HTMLResponse)
    def cart(visit: VisitDep, notice: str = "", line: int | None = None) -> HTMLResponse:
        current = visit.carts.cart(visit.session.id if visit.session else None)
        known = {item.value for item in CartNotice}
        message = notice_text(CartNotice(notice), current, line) if notice in known else None
        return visit.render(
            "cart.html",
            cart=current,
            notice=message,
            max_quantity=MAX_LINE_QUANTITY,
            free_shipping_from=STANDARD_SHIPPING.free_from_cents,
        )

    @router.post("/cart/add", response_model=None)
    def add(visit: VisitDep, form: FormDep) -> Response:
        product_id = form.integer("product_id")
        product = visit.catalog.product(product_id) if product_id is not None else None
        if product is None:
            return visit.not_found("We could not find that product.")
        size, color = form.text("size"), form.text("color")
        quantity = form.integer("quantity")
        try:
            if quantity is None:
                raise CartError("Enter a quantity as a whole number.")
            added = visit.carts.add(visit.ensure_session().id, product, size, color, quantity)
        except CartError as error:
            return render_product(visit, product, str(error), size, color, quantity or 1, status_code=422)
        notice = CartNotice.LIMITED if added.limited else CartNotice.ADDED
        return visit.redirect(f"/cart?notice={notice.value}&line={added.line_id}")

    @router.post("/cart/update", response_model=None)
    def update(visit: VisitDep, form: FormDep) -> RedirectResponse:
        line_id, quantity = form.integer("line_id"), form.integer("quantity")
        if visit.session is None or line_id is None:
            return visit.redirect(f"/cart?notice={CartNotice.NOT_FOUND.value}")
        if quantity is None:
            return visit.redirect(f"/cart?notice={CartNotice.BAD_QUANTITY.value}")
        change = visit.carts.set_quantity(visit.session.id, line_id, quantity)
        return visit.redirect(f"/cart?notice={_CHANGE_NOTICES[change].value}&line={line_id}")

    @router.post("/cart/remove", response_model=None)
    def remove(visit: VisitDep, form: FormDep) -> RedirectResponse:
        line_id = form.integer("line_id")
        removed = visit.session is not None and line_id is not None and visit.carts.remove(visit.session.id, line_id)
        notice = CartNotice.REMOVED if removed else CartNotice.NOT_FOUND
        return visit.redirect(f"/cart?notice={notice.value}")

    return router
