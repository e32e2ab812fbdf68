"""The filesystem edge: decoding, encoding, format detection and atomic writes."""
