"""Fuzz harnesses (`fuzz_program.py`, `fuzz_parser.py`) and their corpus; see each file."""
