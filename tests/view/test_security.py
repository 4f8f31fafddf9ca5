"""The viewer answers only requests addressed to loopback (a DNS-rebinding defence) and sends a strict CSP.

A page of some web site whose name an attacker points at 127.0.0.1 (DNS rebinding) reaches the viewer with that
name in ``Host``: refused with 421 before any page is rendered. Every response carries a Content-Security-Policy
that allows no inline script or style and nothing from another origin; the pages' CSS and JS are files of the
viewer's own origin.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from aiohttp.test_utils import TestClient, TestServer

from mpcbench_async.view import make_app, open_index
from tests.view.conftest import ERROR_KEY
from tests.view.dom import parse

PAGES = ["/", "/runs", "/compare", f"/run/{ERROR_KEY}", "/levels", "/nowhere"]


@pytest.fixture
async def client(sweep_dir) -> AsyncIterator[TestClient]:
    index = open_index(sweep_dir)
    async with TestClient(TestServer(make_app(index, bound_host="127.0.0.2"))) as client:
        yield client
    index.close()


def directives(response) -> dict[str, list[str]]:
    policy = response.headers["Content-Security-Policy"]
    return {name: values for name, *values in (part.split() for part in policy.split(";") if part.strip())}


class TestHost:
    @pytest.mark.parametrize("host", ["evil.example", "evil.example:8080", "localhost.evil.example",
                                      "127.0.0.1.nip.io", "127.0.0.1:80@evil.example", "[::2]:80", "10.0.0.7", ""])
    @pytest.mark.parametrize("path", ["/", "/runs", "/static/view.js", "/nowhere"])
    async def test_a_foreign_host_is_refused_with_421_and_no_page(self, client, host, path):
        response = await client.get(path, headers={"Host": host})
        text = await response.text()
        assert (421, "text/plain") == (response.status, response.content_type)
        assert text.startswith("421 Misdirected Request: this viewer answers only at localhost, 127.0.0.1 or [::1]")
        assert "<" not in text and "Sweep" not in text
        assert "default-src 'none'" in response.headers["Content-Security-Policy"]

    @pytest.mark.parametrize("host", ["localhost", "LOCALHOST:1234", "127.0.0.1", "127.0.0.1:8000", "[::1]",
                                      "[::1]:8000", "localhost.", "127.0.0.2:9"])
    async def test_loopback_names_and_the_bound_address_are_served(self, client, host):
        """Any port: a tunnel (ssh -L 9000:127.0.0.1:PORT) reaches the viewer as localhost:9000."""
        response = await client.get("/", headers={"Host": host})
        assert (200, "text/html") == (response.status, response.content_type)


class TestContentSecurityPolicy:
    @pytest.mark.parametrize("path", PAGES)
    async def test_every_page_forbids_inline_script_and_style_and_other_origins(self, client, path):
        response = await client.get(path)
        policy = directives(response)
        assert policy["default-src"] == ["'none'"]
        assert policy["script-src"] == ["'self'"] and policy["style-src"] == ["'self'"]
        assert policy["base-uri"] == ["'none'"] and policy["frame-ancestors"] == ["'none'"]
        assert policy["form-action"] == ["'self'"]
        assert not any("unsafe" in v or "*" in v or v.startswith("http") for vs in policy.values() for v in vs)
        assert response.headers["X-Content-Type-Options"] == "nosniff"
        doc = parse(await response.text())
        scripts, styles = doc.all("script"), doc.all("style")
        assert [] == styles and [] == [s for s in scripts if s.text.strip() or "src" not in s.attrs]
        assert ["/static/view.js"] == [s.attrs["src"] for s in scripts]
        assert ["/static/view.css"] == [link.attrs["href"] for link in doc.all("link", rel="stylesheet")]
        assert not any(name.startswith("on") or name == "style" for e in doc.all() for name in e.attrs)

    async def test_the_stylesheet_and_script_are_served_from_the_viewers_origin(self, client):
        css, js = await client.get("/static/view.css"), await client.get("/static/view.js")
        assert (200, "text/css", 200, "text/javascript") == (css.status, css.content_type, js.status,
                                                            js.content_type)
        assert "nav{" in await css.text() and "form#filters select" in await js.text()
        assert "default-src 'none'" in css.headers["Content-Security-Policy"]
