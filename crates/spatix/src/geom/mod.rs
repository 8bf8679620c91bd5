//! Scalars, points and closed axis-aligned boxes.

mod aabb;
mod point;
mod scalar;

pub use aabb::Aabb;
pub(crate) use aabb::bulk_range;
pub use point::Point;
pub use scalar::Scalar;
