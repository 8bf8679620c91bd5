//! The serde form of a structure, for users who keep an index inside their own serialised
//! state: the structure's byte form without its values (its header names the value kind
//! `serde`), and the values serialised by serde beside it, so that any `T: Serialize` works.

use core::fmt;
use core::marker::PhantomData;

use serde::de::{self, MapAccess, SeqAccess, Visitor};
use serde::ser::SerializeStruct;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::{Layout, Reader, ValueKind, Writer, corrupt};

/// The field names, in order.
const FIELDS: &[&str] = &["layout", "values"];

/// `Serialize` for a structure: `{ layout: bytes, values: [T] }`.
pub(crate) fn serialize<X, Ser>(x: &X, s: Ser) -> Result<Ser::Ok, Ser::Error>
where
    X: Layout,
    X::T: Serialize,
    Ser: Serializer,
{
    let mut w = Writer::new::<X::S>(X::NAME, ValueKind::SERDE, x.size_hint() + 64);
    x.write_layout(&mut w, &mut |w, x| w.u64(x.value_count() as u64));
    let layout = w.finish();
    let mut st = s.serialize_struct("Spatix", 2)?;
    st.serialize_field("layout", &Bytes(&layout))?;
    st.serialize_field("values", &Values(x))?;
    st.end()
}

/// The layout as a byte string (serde writes a `&[u8]` as a sequence of numbers otherwise).
struct Bytes<'a>(&'a [u8]);

impl Serialize for Bytes<'_> {
    fn serialize<Ser: Serializer>(&self, s: Ser) -> Result<Ser::Ok, Ser::Error> {
        s.serialize_bytes(self.0)
    }
}

/// The values, in the structure's order.
struct Values<'a, X>(&'a X);

impl<X: Layout> Serialize for Values<'_, X>
where
    X::T: Serialize,
{
    fn serialize<Ser: Serializer>(&self, s: Ser) -> Result<Ser::Ok, Ser::Error> {
        s.collect_seq(self.0.values())
    }
}

/// A byte string, from formats that keep bytes as bytes and from those that keep them as a
/// sequence of numbers.
struct ByteBuf(Vec<u8>);

impl<'de> Deserialize<'de> for ByteBuf {
    fn deserialize<De: Deserializer<'de>>(d: De) -> Result<Self, De::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = ByteBuf;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a spatix layout as bytes")
            }
            fn visit_bytes<E: de::Error>(self, v: &[u8]) -> Result<ByteBuf, E> {
                Ok(ByteBuf(v.to_vec()))
            }
            fn visit_byte_buf<E: de::Error>(self, v: Vec<u8>) -> Result<ByteBuf, E> {
                Ok(ByteBuf(v))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<ByteBuf, A::Error> {
                // At most what the format says is coming, and never more than a bound: the
                // vector grows with the bytes actually read.
                let mut out = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(1 << 16));
                while let Some(b) = seq.next_element()? {
                    out.push(b);
                }
                Ok(ByteBuf(out))
            }
        }
        d.deserialize_bytes(V)
    }
}

/// `Deserialize` for a structure written by [`serialize`].
pub(crate) fn deserialize<'de, X, De>(d: De) -> Result<X, De::Error>
where
    X: Layout,
    X::T: Deserialize<'de>,
    De: Deserializer<'de>,
{
    d.deserialize_struct("Spatix", FIELDS, StructureVisitor(PhantomData))
}

struct StructureVisitor<X>(PhantomData<X>);

impl<X: Layout> StructureVisitor<X> {
    /// The structure from its layout and values.
    fn assemble<E: de::Error>(layout: &[u8], values: Vec<X::T>) -> Result<X, E> {
        let mut values = Some(values);
        let mut r = Reader::new::<X::S>(layout, X::NAME, ValueKind::SERDE).map_err(E::custom)?;
        let x = X::read_layout(&mut r, &mut |r, n| {
            let count = r.count(0, "the values")?;
            let values = values.take().unwrap_or_default();
            if count != n || values.len() != n {
                return Err(corrupt(format!(
                    "{} values, for {n} elements",
                    values.len()
                )));
            }
            Ok(values)
        });
        r.finish(x).map_err(E::custom)
    }
}

impl<'de, X: Layout> Visitor<'de> for StructureVisitor<X>
where
    X::T: Deserialize<'de>,
{
    type Value = X;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a spatix structure (layout and values)")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<X, A::Error> {
        let layout: ByteBuf = seq
            .next_element()?
            .ok_or_else(|| de::Error::invalid_length(0, &self))?;
        let values: Vec<X::T> = seq
            .next_element()?
            .ok_or_else(|| de::Error::invalid_length(1, &self))?;
        Self::assemble(&layout.0, values)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<X, A::Error> {
        let mut layout: Option<ByteBuf> = None;
        let mut values: Option<Vec<X::T>> = None;
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "layout" if layout.is_none() => layout = Some(map.next_value()?),
                "values" if values.is_none() => values = Some(map.next_value()?),
                "layout" | "values" => return Err(de::Error::duplicate_field("layout or values")),
                other => return Err(de::Error::unknown_field(other, FIELDS)),
            }
        }
        let layout = layout.ok_or_else(|| de::Error::missing_field("layout"))?;
        let values = values.ok_or_else(|| de::Error::missing_field("values"))?;
        Self::assemble(&layout.0, values)
    }
}

#[cfg(test)]
mod tests {
    use crate::{
        Aabb, ByteForm, Handle, KdTree, Point, Quadtree, SpatialIndex, SpatialQuery, SweepGrid,
        UniformGrid,
    };

    fn world() -> Aabb<f64> {
        Aabb::new(Point::new(0.0, 0.0), Point::new(100.0, 100.0)).unwrap()
    }

    /// Fills a dynamic structure with named elements, removes some, and returns the
    /// handles: the removed ones must stay stale through serde.
    fn fill<I: SpatialIndex<f64, String>>(index: &mut I) -> (Vec<Handle>, Vec<Handle>) {
        let mut live = Vec::new();
        let mut gone = Vec::new();
        for i in 0..200 {
            let x = f64::from(i % 20) * 5.0;
            let y = f64::from(i / 20) * 9.0;
            let b = Aabb::new(Point::new(x, y), Point::new(x + 3.0, y + 2.0)).unwrap();
            let h = index.insert(b, format!("element {i}")).unwrap();
            if i % 3 == 0 {
                index.remove(h).unwrap();
                gone.push(h);
            } else {
                live.push(h);
            }
        }
        (live, gone)
    }

    fn round_trip<I>(index: &I, live: &[Handle], gone: &[Handle])
    where
        I: SpatialQuery<f64, String> + serde::Serialize + serde::de::DeserializeOwned,
    {
        let json = serde_json::to_string(index).unwrap();
        let loaded: I = serde_json::from_str(&json).unwrap();
        loaded.check_invariants().unwrap();
        assert_eq!(loaded.len(), index.len());
        for &h in live {
            let (a, b) = (index.get(h).unwrap(), loaded.get(h).unwrap());
            assert_eq!((a.aabb, a.value), (b.aabb, b.value));
        }
        assert!(gone.iter().all(|&h| loaded.get(h).is_none()));
        assert_eq!(serde_json::to_string(&loaded).unwrap(), json);
    }

    #[test]
    fn any_serde_value_goes_through_serde() {
        let mut grid = UniformGrid::new(world(), 10.0).unwrap();
        let (live, gone) = fill(&mut grid);
        round_trip(&grid, &live, &gone);
        let mut tree = Quadtree::new(world()).unwrap();
        let (live, gone) = fill(&mut tree);
        round_trip(&tree, &live, &gone);
        let mut sweep = SweepGrid::new(world(), 10.0).unwrap();
        let (live, gone) = fill(&mut sweep);
        round_trip(&sweep, &live, &gone);
        let kd = KdTree::build((0..100).map(|i| (Point::new(f64::from(i), 1.0), format!("{i}"))))
            .unwrap();
        let handles: Vec<Handle> = kd.iter().map(|item| item.handle).collect();
        round_trip(&kd, &handles, &[]);
    }

    #[test]
    fn serde_form_refuses_what_does_not_fit() {
        let mut grid = UniformGrid::new(world(), 10.0).unwrap();
        fill(&mut grid);
        let mut json: serde_json::Value = serde_json::to_value(&grid).unwrap();
        json["values"].as_array_mut().unwrap().pop();
        let short = serde_json::from_value::<UniformGrid<f64, String>>(json);
        assert!(short.unwrap_err().to_string().contains("values"));
        // The layout of the byte form is not the serde form's: a byte form is refused.
        let bytes = UniformGrid::<f64, u32>::new(world(), 10.0)
            .unwrap()
            .to_bytes();
        let as_serde = serde_json::json!({ "layout": bytes, "values": [] });
        assert!(serde_json::from_value::<UniformGrid<f64, u32>>(as_serde).is_err());
    }
}
