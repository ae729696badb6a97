"""Checkout: the form, server-side validation, placing the order and its confirmation page."""

# No `from __future__ import annotations`: FastAPI must see the real annotations, and the dependency aliases
# (VisitDep and friends) are local to build_router, where string annotations could not be resolved.

from typing import Annotated

from fastapi import APIRouter, Depends
from fastapi.responses import HTMLResponse, Response

from .checkout import CheckoutForm, CheckoutResult, validate_checkout
from .context import ShopContext
from .countries import COUNTRIES
from .forms import FormData, read_form
from .models import Cart, Order
from .orders import EmptyCartError, OutOfStockError
from .pricing import SHIPPING_METHODS, STANDARD_SHIPPING, shipping_method
from .visit import Visit


def _form_from_post(form: FormData) -> CheckoutForm:
    return CheckoutForm(
        full_name=form.text("full_name"),
        email=form.text("email"),
        address=form.text("address"),
        city=form.text("city"),
        zip_code=form.text("zip_code"),
        country=form.text("country"),
        shipping_method=form.text("shipping_method"),
        card_number=form.text("card_number"),
        card_expiry=form.text("card_expiry"),
        card_cvc=form.text("card_cvc"),
    )


def _prefilled(visit: Visit) -> CheckoutForm:
    user = visit.user
    if user is None:
        return CheckoutForm()
    return CheckoutForm(
        full_name=user.name,
        email=user.email,
        address=user.address,
        city=user.city,
        zip_code=user.zip_code,
        country=user.country,
    )


def _can_view(visit: Visit, order: Order) -> bool:
    """The confirmation belongs to the browser session that placed the order, or to its signed-in owner."""
    same_session = visit.session is not None and order.session_id == visit.session.id
    same_user = visit.user is not None and order.user_id == visit.user.id
    return same_session or same_user


def build_router(ctx: ShopContext) -> APIRouter:
    router = APIRouter()
    VisitDep = Annotated[Visit, Depends(ctx.visit)]
    FormDep = Annotated[FormData, Depends(read_form)]

    def checkout_page(
        visit: Visit, cart: Cart, form: CheckoutForm, result: CheckoutResult, problem: str | None, status_code: int
    ) -> HTMLResponse:
        method = shipping_method(form.shipping_method) or STANDARD_SHIPPING
        shipping = method.cost_for(cart.subtotal_cents)
        return visit.render(
            "checkout.html",
            status_code=status_code,
            cart=cart,
            form=form,
            result=result,
            problem=problem,
            countries=COUNTRIES,
            shipping_methods=SHIPPING_METHODS,
            shipping_cents=shipping,
            total_cents=cart.subtotal_cents + shipping,
        )

    @router.get("/checkout", response_model=None)
    def checkout(visit: VisitDep) -> Response:
        cart = visit.carts.cart(visit.session.id if visit.session else None)
        if cart.is_empty:
            return visit.redirect("/cart")
        return checkout_page(visit, cart, _prefilled(visit), CheckoutResult(None, ()), None, 200)

    @router.post("/checkout", response_model=None)
    def place_order(visit: VisitDep, form: FormDep) -> Response:
        session = visit.session
        cart = visit.carts.cart(session.id if session else None)
        if session is None or cart.is_empty:
            return visit.redirect("/cart")
        entered = _form_from_post(form)
        result = validate_checkout(entered, visit.now().date())
        if result.request is None:
            return checkout_page(visit, cart, entered.without_card_data(), result, None, 422)
        try:
            order = visit.orders.place(session, result.request, visit.now())
        except EmptyCartError:
            return visit.redirect("/cart")
        except OutOfStockError as error:
            problem = (
                "Some items in your cart are no longer available in the quantity you chose: "
                f"{', '.join(error.product_names)}. Please update your cart."
            )
            return checkout_page(visit, cart, entered.without_card_data(), result, problem, 409)
        return visit.redirect(f"/checkout/confirmation/{order.number}")

    @router.get("/checkout/confirmation/{number}", response_class=HTMLResponse)
    def confirmation(visit: VisitDep, number: str) -> HTMLResponse:
        order = visit.orders.by_number(number)
        if order is None or not _can_view(visit, order):
            return visit.not_found("We could not find that order.")
        return visit.render("confirmation.html", order=order)

    return router
