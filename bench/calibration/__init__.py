"""Calibration of assay's statistics: seeded simulations whose table docs/statistics.md shows.

Each module of this package covers one method and has ``rows() -> list[Row]``; ``__main__``
runs them all and rewrites the table in docs/statistics.md between its markers.
"""
