//! Stanford PLY (Greg Turk, "The PLY Polygon File Format", 1994): a text header declaring
//! elements (a name, a count, typed properties), then the elements' values in the order
//! declared, as ASCII text or binary of either byte order.
//!
//! Read: the `vertex` element's `x`, `y`, `z` (any scalar type) and the `face` element's
//! `vertex_indices` (or `vertex_index`) list (any integer count and index types), fan
//! triangulated. Every other element and property, lists included, is read past. Scalar types go
//! by their classic names (`char`, `uchar`, `short`, `ushort`, `int`, `uint`, `float`, `double`)
//! or their sized aliases (`int8`, `uint8`, ... `float64`). Before an element is read, its count
//! is checked against what the remaining bytes could hold, so a header announcing billions of
//! faces fails at once instead of allocating. Vertex numbers in messages count from 0, as PLY's
//! indices do.

use glam::DVec3;

use super::ply_values::{Ascii, Binary, Scalar, Values};
use super::text::{self, axis_name, show};
use super::{MeshFormat, finish, triangulate_fan};
use crate::error::GeometryError;
use crate::trimesh::TriMesh;

/// How a property's values are stored.
#[derive(Clone, Copy, Debug)]
enum Kind {
    Scalar(Scalar),
    List { count: Scalar, item: Scalar },
}

#[derive(Clone, Debug)]
struct Property {
    name: Vec<u8>,
    kind: Kind,
}

#[derive(Clone, Debug)]
struct Element {
    name: Vec<u8>,
    count: usize,
    properties: Vec<Property>,
}

/// What an element means to the reader.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Role {
    /// The vertices, with the property positions of x, y and z.
    Vertices([usize; 3]),
    /// The faces, with the position of the index list.
    Faces(usize),
    Skipped,
}

/// Reads a PLY file's bytes into a welded, compacted mesh (see the [module docs](self)).
pub fn read_ply(bytes: &[u8]) -> Result<TriMesh, GeometryError> {
    let header = Header::parse(bytes)?;
    let roles = header.roles()?;
    match header.encoding {
        Encoding::Ascii => read_body(
            &header,
            &roles,
            Ascii {
                bytes,
                position: header.body,
                line: header.lines + 1,
                token_line: header.lines + 1,
            },
        ),
        Encoding::Binary { big_endian } => read_body(
            &header,
            &roles,
            Binary {
                bytes,
                position: header.body,
                start: header.body,
                big_endian,
            },
        ),
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Encoding {
    Ascii,
    Binary { big_endian: bool },
}

#[derive(Clone, Debug)]
struct Header {
    encoding: Encoding,
    elements: Vec<Element>,
    /// Byte offset of the body.
    body: usize,
    /// Lines in the header.
    lines: usize,
}

impl Header {
    fn parse(bytes: &[u8]) -> Result<Self, GeometryError> {
        let mut encoding = None;
        let mut elements: Vec<Element> = Vec::new();
        let mut position = 0;
        let mut number = 0;
        loop {
            number += 1;
            let error = |message: String| GeometryError::parse("PLY", format!("line {number}"), message);
            let Some(length) = bytes[position..].iter().position(|b| *b == b'\n') else {
                return Err(error("the header has no 'end_header' line (truncated?)".to_string()));
            };
            let line = &bytes[position..position + length];
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            position += length + 1;
            let mut tokens = text::tokens(line);
            let keyword = tokens.next().unwrap_or_default();
            if number == 1 {
                if line.trim_ascii_end() != b"ply" {
                    return Err(error("not a PLY file: the first line must be 'ply'".to_string()));
                }
                continue;
            }
            match keyword {
                b"format" => {
                    let name = tokens.next().unwrap_or_default();
                    encoding = Some(match name {
                        b"ascii" => Encoding::Ascii,
                        b"binary_little_endian" => Encoding::Binary { big_endian: false },
                        b"binary_big_endian" => Encoding::Binary { big_endian: true },
                        _ => return Err(error(format!("unknown format '{}'", show(name)))),
                    });
                }
                b"comment" | b"obj_info" | b"" => {}
                b"element" => {
                    let name = tokens.next().unwrap_or_default().to_vec();
                    let count_token = tokens.next().unwrap_or_default();
                    let count = std::str::from_utf8(count_token)
                        .ok()
                        .and_then(|c| c.parse().ok())
                        .ok_or_else(|| {
                            error(format!(
                                "element '{}': count '{}' is not a non-negative integer",
                                show(&name),
                                show(count_token)
                            ))
                        })?;
                    elements.push(Element {
                        name,
                        count,
                        properties: Vec::new(),
                    });
                }
                b"property" => {
                    let element = elements
                        .last_mut()
                        .ok_or_else(|| error("a property before any element".to_string()))?;
                    element.properties.push(property(tokens).map_err(error)?);
                }
                b"end_header" => {
                    let encoding = encoding.ok_or_else(|| error("no 'format' line in the header".to_string()))?;
                    return Ok(Self {
                        encoding,
                        elements,
                        body: position,
                        lines: number,
                    });
                }
                _ => return Err(error(format!("unknown header line '{}'", show(line)))),
            }
        }
    }

    /// The role of every element, checking that the vertices and faces are there and usable.
    fn roles(&self) -> Result<Vec<Role>, GeometryError> {
        let error = |message: String| GeometryError::parse("PLY", "header", message);
        let find = |name: &[u8]| self.elements.iter().position(|e| e.name == name);
        let vertex = find(b"vertex").ok_or_else(|| error("no 'vertex' element".to_string()))?;
        let mut xyz = [0; 3];
        for (axis, slot) in xyz.iter_mut().enumerate() {
            let name = axis_name(axis).as_bytes();
            let properties = &self.elements[vertex].properties;
            *slot = properties
                .iter()
                .position(|p| p.name == name)
                .ok_or_else(|| error(format!("the 'vertex' element has no '{}' property", axis_name(axis))))?;
            if let Kind::List { .. } = properties[*slot].kind {
                return Err(error(format!("vertex property '{}' is a list", axis_name(axis))));
            }
        }
        let face = find(b"face")
            .ok_or_else(|| error("no 'face' element: not a triangle mesh (a point cloud?)".to_string()))?;
        let indices = self.elements[face]
            .properties
            .iter()
            .position(|p| p.name == b"vertex_indices" || p.name == b"vertex_index")
            .ok_or_else(|| error("the 'face' element has no 'vertex_indices' list".to_string()))?;
        match self.elements[face].properties[indices].kind {
            Kind::List { item, .. } if item.integer_range().is_some() => {}
            _ => {
                return Err(error(
                    "face property 'vertex_indices' must be a list of integers".to_string(),
                ));
            }
        }
        Ok((0..self.elements.len())
            .map(|e| match e {
                e if e == vertex => Role::Vertices(xyz),
                e if e == face => Role::Faces(indices),
                _ => Role::Skipped,
            })
            .collect())
    }
}

/// A property line's tokens after `property`: `type name` or `list count_type item_type name`.
fn property<'a>(mut tokens: impl Iterator<Item = &'a [u8]>) -> Result<Property, String> {
    let scalar = |token: Option<&[u8]>| {
        let token = token.unwrap_or_default();
        Scalar::from_name(token).ok_or_else(|| format!("unknown property type '{}'", show(token)))
    };
    let first = tokens.next();
    let kind = if first == Some(b"list") {
        let count = scalar(tokens.next())?;
        if count.integer_range().is_none() {
            return Err("a list's count type must be an integer type".to_string());
        }
        Kind::List {
            count,
            item: scalar(tokens.next())?,
        }
    } else {
        Kind::Scalar(scalar(first)?)
    };
    let name = tokens.next().ok_or("a property without a name")?.to_vec();
    Ok(Property { name, kind })
}

/// Walks every element of the body, keeping vertices and faces.
fn read_body(header: &Header, roles: &[Role], mut values: impl Values) -> Result<TriMesh, GeometryError> {
    let mut vertices: Vec<DVec3> = Vec::new();
    let mut triangles: Vec<[u32; 3]> = Vec::new();
    let mut polygon: Vec<u32> = Vec::new();
    // Largest index seen and where: indices are checked once the vertex count is known (faces
    // may precede vertices).
    let mut largest: Option<(u32, usize)> = None;
    for (element, role) in header.elements.iter().zip(roles) {
        let name = show(&element.name);
        let error = |values: &dyn Values, record: usize, property: &Property, message: String| {
            GeometryError::parse(
                "PLY",
                values.describe(values.mark()),
                format!(
                    "element '{name}' record {record}, property '{}': {message}",
                    show(&property.name)
                ),
            )
        };
        // Fewest bytes one record takes: refuse counts the rest of the file cannot hold.
        let record_bytes: usize = element
            .properties
            .iter()
            .map(|p| match p.kind {
                Kind::Scalar(ty) => values.min_bytes(ty),
                Kind::List { count, .. } => values.min_bytes(count),
            })
            .sum();
        if element
            .count
            .checked_mul(record_bytes)
            .is_none_or(|bytes| bytes > values.remaining())
        {
            return Err(GeometryError::parse(
                "PLY",
                values.describe(values.here()),
                format!(
                    "element '{name}' announces {} records of at least {record_bytes} bytes, but {} bytes remain (truncated, or a wrong count?)",
                    element.count,
                    values.remaining()
                ),
            ));
        }
        if record_bytes == 0 {
            continue;
        }
        // Bounded by the remaining bytes, checked above.
        match role {
            Role::Vertices(_) => vertices.reserve(element.count),
            Role::Faces(_) => triangles.reserve(element.count),
            Role::Skipped => {}
        }
        for record in 0..element.count {
            let mut xyz = [0.0; 3];
            for (p, property) in element.properties.iter().enumerate() {
                let fail = |values: &dyn Values, message| error(values, record, property, message);
                match property.kind {
                    Kind::Scalar(ty) => {
                        let value = values.value(ty).map_err(|m| fail(&values, m))?;
                        if let Role::Vertices(axes) = role
                            && let Some(axis) = axes.iter().position(|a| *a == p)
                        {
                            if !value.is_finite() {
                                return Err(fail(
                                    &values,
                                    format!(
                                        "vertex {record} has a non-finite {} coordinate: {value}",
                                        axis_name(axis)
                                    ),
                                ));
                            }
                            xyz[axis] = value;
                        }
                    }
                    Kind::List { count, item } => {
                        let length = values.value(count).map_err(|m| fail(&values, m))?;
                        if length < 0.0 {
                            return Err(fail(&values, format!("negative list length {length}")));
                        }
                        let length = length as usize;
                        if *role != Role::Faces(p) {
                            values.skip(item, length).map_err(|m| fail(&values, m))?;
                            continue;
                        }
                        read_polygon(&mut values, item, length, &mut polygon, &mut largest)
                            .map_err(|m| fail(&values, m))?;
                        triangulate_fan(&polygon, &mut triangles);
                    }
                }
            }
            if let Role::Vertices(_) = role {
                vertices.push(DVec3::from_array(xyz));
            }
        }
    }
    values
        .finish()
        .map_err(|message| GeometryError::parse("PLY", values.describe(values.here()), message))?;
    if let Some((index, mark)) = largest
        && index as usize >= vertices.len()
    {
        return Err(GeometryError::parse(
            "PLY",
            values.describe(mark),
            format!(
                "vertex index {index} is out of range: the file has {} vertices",
                vertices.len()
            ),
        ));
    }
    finish(MeshFormat::Ply, vertices, triangles)
}

/// Reads the `length` indices of type `item` of one face into `polygon`, keeping the largest
/// index seen and where it was.
fn read_polygon(
    values: &mut impl Values,
    item: Scalar,
    length: usize,
    polygon: &mut Vec<u32>,
    largest: &mut Option<(u32, usize)>,
) -> Result<(), String> {
    if length < 3 {
        return Err(format!("a face with {length} vertices: faces need at least 3"));
    }
    polygon.clear();
    for _ in 0..length {
        let index = values.value(item)?;
        // Vertex counts, and so indices plus one, must fit a u32.
        if !(0.0..=f64::from(u32::MAX - 1)).contains(&index) {
            return Err(format!("vertex index {index} is out of range"));
        }
        let index = index as u32;
        if largest.is_none_or(|(l, _)| index > l) {
            *largest = Some((index, values.mark()));
        }
        polygon.push(index);
    }
    Ok(())
}
