"""pyir.arith: the one symbolic-arithmetic core (simplification, bounds, proofs)."""
