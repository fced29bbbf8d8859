def main() -> None: raise SystemExit("mlxir: not yet")
