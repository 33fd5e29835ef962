"""Helpers shared by the test folders: one module per area (kernel, browser, session, …)."""
