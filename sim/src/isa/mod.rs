//! The GFX9/CDNA instruction set: decoder and interpreter (to be written).
