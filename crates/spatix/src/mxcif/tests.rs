//! Focused unit tests of the MX-CIF quadtree.
