// A source file in no layer: refused.
