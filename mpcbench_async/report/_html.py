"""HTML building blocks: escaping, the page shell (nav, title, CSS/JS), tables and number formats.

Why plain strings: pages are small and server-rendered, and the shared report
must be one offline file; a template engine would add a dependency for nothing.
Every value from a sweep goes through ``esc`` (model output may hold
``<script>``); markup is only ever built here and in the page modules. The viewer
links its CSS and JS as files of its own origin (``assets="linked"``: its
Content-Security-Policy allows no inline script or style); the report, one offline
file, inlines them.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from html import escape
from typing import Any, Literal
from urllib.parse import quote, urlencode

__all__ = ["SCRIPT", "SCRIPT_PATH", "STYLESHEET", "STYLESHEET_PATH", "esc", "fmt", "href", "page", "pct", "table"]

_CSS = """
body{font-family:system-ui,sans-serif;margin:0;color:#222;background:#fafafa}
nav{background:#234;padding:8px 16px}nav a{color:#fff;margin-right:18px;text-decoration:none;font-weight:600}
main{padding:12px 20px;max-width:1400px}
table{border-collapse:collapse;margin:8px 0 16px;font-size:13px;background:#fff}
th,td{border:1px solid #ccc;padding:3px 7px;text-align:left;vertical-align:top}
th{background:#eef}td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
.message{border:1px solid #ccc;border-radius:6px;margin:8px 0;padding:6px 10px;background:#fff}
.message[data-role=system]{background:#f4f4f4}.message[data-role=user]{background:#eef6ff}
.message[data-role=assistant]{background:#f3fff0}.message[data-role=tool]{background:#fff8e8}
.role{font-weight:700;font-size:12px;text-transform:uppercase;color:#555}
.tool-call{border-left:3px solid #c90;margin:6px 0;padding:2px 8px}.tool-name{font-weight:700}
pre{white-space:pre-wrap;word-break:break-word;margin:4px 0;font-size:12px;max-height:30em;overflow:auto}
.status-pass,.status-ok{color:#070}.status-fail,.status-error{color:#b00}.status-n\\/a{color:#777}
form#filters label{margin-right:10px}.muted{color:#777}section{margin-bottom:22px}
.run{border-top:2px solid #234;margin-top:18px;padding-top:6px}
.fold pre.foldable{max-height:16em;overflow:hidden}.fold.open pre.foldable{max-height:none;overflow:visible}
.show-all{font-size:12px;margin:2px 0 6px}mark.hit{background:#ffe066}
"""

_JS = """
document.querySelectorAll('form#filters select').forEach(function(s){
  s.addEventListener('change',function(){s.form.submit();});});
document.querySelectorAll('.fold .show-all').forEach(function(b){
  b.addEventListener('click',function(){
    var open=b.parentNode.classList.toggle('open');b.textContent=open?'show less':b.dataset.label;});});
(function(){  /* search this transcript: mark every match, unfold the texts that hold one */
  var box=document.getElementById('transcript-search'),root=document.getElementById('transcript');
  if(!box||!root){return;}
  function clear(){
    root.querySelectorAll('mark.hit').forEach(function(m){m.replaceWith(document.createTextNode(m.textContent));});
    root.normalize();}
  box.addEventListener('input',function(){
    clear();var q=box.value.toLowerCase(),n=0,nodes=[];
    if(q){
      var walk=document.createTreeWalker(root,NodeFilter.SHOW_TEXT);
      while(walk.nextNode()){if(!walk.currentNode.parentNode.closest('button')){nodes.push(walk.currentNode);}}
      nodes.forEach(function(node){
        var text=node.nodeValue,lower=text.toLowerCase(),i=lower.indexOf(q),last=0;
        if(i<0){return;}
        var frag=document.createDocumentFragment();
        while(i>=0){
          frag.appendChild(document.createTextNode(text.slice(last,i)));
          var m=document.createElement('mark');m.className='hit';m.textContent=text.slice(i,i+q.length);
          frag.appendChild(m);n++;last=i+q.length;i=lower.indexOf(q,last);}
        frag.appendChild(document.createTextNode(text.slice(last)));
        var fold=node.parentNode.closest('.fold');
        if(fold&&!fold.classList.contains('open')){fold.querySelector('.show-all').click();}
        node.parentNode.replaceChild(frag,node);});}
    document.getElementById('search-count').textContent=q?(n+(n===1?' match':' matches')):'';
    var first=root.querySelector('mark.hit');if(first){first.scrollIntoView({block:'center'});}});
})();
(function(){
  if(location.protocol!=='http:'){return;}  /* the viewer only: a report opened from a file has nothing to poll */
  var seen=null;
  function poll(){
    fetch('/live',{cache:'no-store'}).then(function(r){return r.json();}).then(function(d){
      if(seen===null){seen=d.version;return;}
      if(d.version===seen){return;}
      seen=d.version;
      var path=location.pathname;
      if(path==='/'||path==='/runs'||path==='/compare'){location.reload();return;}
      if(document.getElementById('live-banner')){return;}
      var p=document.createElement('p');p.id='live-banner';
      var a=document.createElement('a');a.href=location.href;a.textContent='New records arrived: reload';
      p.appendChild(a);document.querySelector('main').prepend(p);
    }).catch(function(){});
  }
  poll();setInterval(poll,2000);
})();
"""


STYLESHEET, SCRIPT = _CSS, _JS
STYLESHEET_PATH, SCRIPT_PATH = "/static/view.css", "/static/view.js"  # where the viewer serves them


def esc(value: Any) -> str:
    """``value`` as HTML text, quotes included (safe in text and attribute values)."""
    return escape("" if value is None else str(value), quote=True)


def fmt(value: float | None, digits: int = 2) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def pct(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:.1f}%"


def href(path: str, **params: Any) -> str:
    """A same-origin link (escaped for an attribute): ``path`` plus the non-empty query parameters."""
    query = urlencode({k: v for k, v in params.items() if v not in (None, "")})
    return esc(quote(path, safe="/") + (f"?{query}" if query else ""))


def table(table_id: str | None, header: Sequence[str], rows: Iterable[str], *, cls: str = "") -> str:
    """A table whose ``rows`` are ready ``<tr>`` markup (their attributes carry the DOM contract)."""
    ident = f' id="{esc(table_id)}"' if table_id else ""
    klass = f' class="{esc(cls)}"' if cls else ""
    head = "".join(f"<th>{esc(h)}</th>" for h in header)
    return f"<table{ident}{klass}><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"


def page(title: str, body: str, *, nav: bool = True, refresh_s: int | None = None,
         assets: Literal["inline", "linked"] = "inline") -> str:
    """A whole document: title, CSS and JS, the nav (the viewer's pages; the report has none);
    ``refresh_s``: the browser reloads it after that many seconds (the page shown while the index is built);
    ``assets``: CSS and JS inline (the offline report) or linked from ``STYLESHEET_PATH`` and ``SCRIPT_PATH``
    (the viewer, whose CSP forbids inline ones)."""
    links = ('<nav id="nav"><a href="/">Overview</a><a href="/runs">Runs</a><a href="/compare">Compare</a>'
             '<a href="/settings">Settings</a></nav>'
             if nav else '<nav id="nav"><a href="#leaderboard">Leaderboard</a><a href="#heatmap">Heatmap</a>'
             '<a href="#worst">Worst runs</a><a href="#best">Best runs</a></nav>')
    linked = assets == "linked"
    style = f'<link rel="stylesheet" href="{STYLESHEET_PATH}">' if linked else f"<style>{_CSS}</style>"
    script = f'<script src="{SCRIPT_PATH}"></script>' if linked else f"<script>{_JS}</script>"
    return (f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>{esc(title)}</title>'
            f'<meta name="viewport" content="width=device-width, initial-scale=1"><link rel="icon" href="data:,">'
            + (f'<meta http-equiv="refresh" content="{int(refresh_s)}">' if refresh_s is not None else "")
            + f'{style}</head><body>{links}<main><h1>{esc(title)}</h1>{body}</main>{script}</body></html>')
