"""Plain live widgets with one shared Layout and one shared HTML style (docs/notebook.md "Rendering").

Owns `plain_html`, `plain_vbox`, `plain_hbox`, `plain_button`, `shared_layout` and `is_shared`.
Every ipywidgets widget made without a `layout=` (and an HTML or Button without a `style=`) opens
its own LayoutModel (and HTMLStyleModel / ButtonStyleModel): two extra `comm_open` iopub messages
per widget, about a kilobyte each, and a `comm_close` each at teardown, for models that hold
nothing but defaults. The live views' plain widgets share one default Layout, one default HTML
style and one default button style instead; fixed layouts used by every card
(`shared_layout(**settings)`) are shared the same way. Nothing may mutate them: a widget whose
layout changes gets its own. They are shared by the widgets of one Task (and what renders into
its view) and closed after them (`retire_shared`): in the browser every view of a widget
listens to its layout and style models, and a view's listeners on a model that stays open are
never dropped, so a model shared by every Task of a kernel held ~1,000 listeners — and the
views they keep — per finished cell in the page.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import ipywidgets as widgets
from ipywidgets.widgets.widget_button import ButtonStyle
from ipywidgets.widgets.widget_string import HTMLStyle

_shared: dict[str, widgets.Widget] = {}


def _get(name: str, make: Callable[[], widgets.Widget]) -> widgets.Widget:
    model = _shared.get(name)
    if model is None or model.comm is None:  # (re)made if absent or closed, e.g. by Widget.close_all()
        model = _shared[name] = make()
    return model


def shared_layout(**settings: str) -> widgets.Layout:
    """The kernel's one Layout with exactly these settings (the default one without any)."""
    key = "layout" + "".join(f";{k}={v}" for k, v in sorted(settings.items()))
    return _get(key, lambda: widgets.Layout(**settings))


def is_shared(widget: widgets.Widget) -> bool:
    return any(widget is model for model in _shared.values())


def retire_shared() -> list[widgets.Widget]:
    """Hand over the current shared models (to be closed after the widgets that use them); the
    next widget made gets fresh ones."""
    retired = list(_shared.values())
    _shared.clear()
    return retired


def plain_html(value: str = "") -> widgets.HTML:
    return widgets.HTML(value, layout=shared_layout(), style=_get("html_style", HTMLStyle))


def plain_vbox(children: Sequence[widgets.Widget] = ()) -> widgets.VBox:
    return widgets.VBox(list(children), layout=shared_layout())


def plain_hbox(children: Sequence[widgets.Widget] = (), *, wrap: bool = False) -> widgets.HBox:
    """A row; `wrap=True` lets children that do not fit go to the next line instead of shrinking."""
    return widgets.HBox(list(children), layout=shared_layout(flex_flow="row wrap") if wrap else shared_layout())


def plain_button(description: str, *, button_style: str = "", icon: str = "", width: str = "") -> widgets.Button:
    """A Button on the shared default style and a shared layout. `width="auto"` fits a long label:
    the button never shrinks below it in a row (flex `0 0 auto`), so its text is not cut with an
    ellipsis; only a label wider than the whole row is."""
    layout = shared_layout(width=width, flex="0 0 auto", max_width="100%") if width else shared_layout()
    return widgets.Button(
        description=description,
        button_style=button_style,
        icon=icon,
        layout=layout,
        style=_get("button_style", ButtonStyle),
    )
