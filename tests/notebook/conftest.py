"""The notebook tests draw and judge calls of the kernel and notebook tools as a kernel does once
its session registered them: their declarations are declared for every test here."""

from __future__ import annotations

from tests.support.declared import declare_notebook_tools

declare_notebook_tools()
