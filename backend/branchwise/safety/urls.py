"""Addresses as reasons name them, and the few URL facts the classifier needs."""

from __future__ import annotations

from urllib.parse import urlsplit

WEB_SCHEMES = ("http", "https")


def scheme(url: str) -> str:
    return urlsplit(url.strip()).scheme.casefold()


def path_of(url: str) -> str:
    """The path of an absolute or site-relative address ("/cart/remove")."""
    return urlsplit(url.strip()).path


def same_site(url: str, page_url: str) -> bool:
    """Same scheme, host and port: what a user would call "this site"."""
    target, page = urlsplit(url), urlsplit(page_url)
    return bool(target.netloc) and (target.scheme, target.netloc) == (page.scheme, page.netloc)


def where(url: str, page_url: str) -> str:
    """The path and query on the page's own site ("/cart/add"), the full address on another one."""
    if not same_site(url, page_url):
        return url
    target = urlsplit(url)
    return (target.path or "/") + (f"?{target.query}" if target.query else "")


def anchor_on_page(href: str, document_url: str) -> str | None:
    """The fragment when `href` only jumps within the document it is on ("#reviews"), else None."""
    target, page = urlsplit(href), urlsplit(document_url)
    if not target.fragment or target._replace(fragment="") != page._replace(fragment=""):
        return None
    return "#" + target.fragment
