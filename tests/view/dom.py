"""A tiny DOM for asserting on server-rendered pages without a browser (stdlib ``html.parser``).

``parse`` also checks the markup nests properly: every element closes, in order.
"""

from __future__ import annotations

from html.parser import HTMLParser

VOID = {"meta", "link", "input", "br", "img", "hr"}


class Element:
    def __init__(self, tag: str, attrs: dict[str, str], parent: Element | None) -> None:
        self.tag, self.attrs, self.parent = tag, attrs, parent
        self.children: list[Element] = []
        self.parts: list[str] = []

    @property
    def text(self) -> str:
        return "".join(self.parts)

    def classes(self) -> set[str]:
        return set(self.attrs.get("class", "").split())

    def all(self, tag: str | None = None, cls: str | None = None, **attrs: str) -> list[Element]:
        """Descendants matching the tag, class and attributes (``data_model="x"`` means ``data-model``)."""
        wanted = {k.replace("_", "-"): v for k, v in attrs.items()}
        found = []
        for child in self.children:
            if (tag is None or child.tag == tag) and (cls is None or cls in child.classes()) and all(
                    child.attrs.get(k) == v for k, v in wanted.items()):
                found.append(child)
            found += child.all(tag, cls, **attrs)
        return found

    def one(self, tag: str | None = None, cls: str | None = None, **attrs: str) -> Element:
        found = self.all(tag, cls, **attrs)
        assert len(found) == 1, f"{len(found)} elements match {tag} .{cls} {attrs}"
        return found[0]


class _Parser(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Element("#document", {}, None)
        self.stack = [self.root]

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        element = Element(tag, {k: v or "" for k, v in attrs}, self.stack[-1])
        self.stack[-1].children.append(element)
        if tag not in VOID:
            self.stack.append(element)

    def handle_endtag(self, tag: str) -> None:
        assert self.stack[-1].tag == tag, f"</{tag}> closes <{self.stack[-1].tag}>"
        self.stack.pop()

    def handle_data(self, data: str) -> None:
        for element in self.stack:
            element.parts.append(data)


def parse(html: str) -> Element:
    parser = _Parser()
    parser.feed(html)
    parser.close()
    assert parser.stack == [parser.root], f"unclosed: {[e.tag for e in parser.stack[1:]]}"
    return parser.root
