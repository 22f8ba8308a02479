"""Plain data and text utilities shared by every stage. Nothing here imports libcst."""
