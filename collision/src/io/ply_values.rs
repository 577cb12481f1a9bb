//! The values of a PLY body, ASCII or binary: one reader interface, so that the element walk in
//! [`super::ply`] is written once. Every PLY scalar type (up to 32-bit integers, `float`,
//! `double`) is exact in `f64`, so values come back as `f64`.

use super::text::{self, show};

/// A PLY scalar type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Scalar {
    I8,
    U8,
    I16,
    U16,
    I32,
    U32,
    F32,
    F64,
}

impl Scalar {
    /// The type named in a header, by its classic name or its sized alias.
    pub(super) fn from_name(name: &[u8]) -> Option<Self> {
        Some(match name {
            b"char" | b"int8" => Self::I8,
            b"uchar" | b"uint8" => Self::U8,
            b"short" | b"int16" => Self::I16,
            b"ushort" | b"uint16" => Self::U16,
            b"int" | b"int32" => Self::I32,
            b"uint" | b"uint32" => Self::U32,
            b"float" | b"float32" => Self::F32,
            b"double" | b"float64" => Self::F64,
            _ => return None,
        })
    }

    /// Bytes in the binary encodings.
    pub(super) fn size(self) -> usize {
        match self {
            Self::I8 | Self::U8 => 1,
            Self::I16 | Self::U16 => 2,
            Self::I32 | Self::U32 | Self::F32 => 4,
            Self::F64 => 8,
        }
    }

    /// The range of an integer type; `None` for floating-point types.
    pub(super) fn integer_range(self) -> Option<(i64, i64)> {
        match self {
            Self::I8 => Some((i8::MIN.into(), i8::MAX.into())),
            Self::U8 => Some((0, u8::MAX.into())),
            Self::I16 => Some((i16::MIN.into(), i16::MAX.into())),
            Self::U16 => Some((0, u16::MAX.into())),
            Self::I32 => Some((i32::MIN.into(), i32::MAX.into())),
            Self::U32 => Some((0, u32::MAX.into())),
            Self::F32 | Self::F64 => None,
        }
    }
}

/// A source of body values. Errors are messages; the caller adds where and in what.
pub(super) trait Values {
    /// The next value, of type `ty`.
    fn value(&mut self, ty: Scalar) -> Result<f64, String>;
    /// Skips `count` values of type `ty`.
    fn skip(&mut self, ty: Scalar, count: usize) -> Result<(), String>;
    /// Bytes not yet read: an upper bound on what the rest of the body can hold.
    fn remaining(&self) -> usize;
    /// Fewest bytes a value of type `ty` takes.
    fn min_bytes(&self, ty: Scalar) -> usize;
    /// Where the last value read (or the one that failed) starts, as a number for [`Values::describe`].
    fn mark(&self) -> usize;
    /// Where the next value starts, as a number for [`Values::describe`].
    fn here(&self) -> usize;
    /// A mark as a location: "line 12" or "byte 84".
    fn describe(&self, mark: usize) -> String;
    /// Fails if anything but whitespace (ASCII) or nothing at all (binary) follows the last element.
    fn finish(&mut self) -> Result<(), String>;
}

/// Binary values, either byte order.
pub(super) struct Binary<'a> {
    pub(super) bytes: &'a [u8],
    pub(super) position: usize,
    pub(super) start: usize,
    pub(super) big_endian: bool,
}

impl Values for Binary<'_> {
    fn value(&mut self, ty: Scalar) -> Result<f64, String> {
        let size = ty.size();
        self.start = self.position;
        let source = self.bytes.get(self.position..self.position + size).ok_or_else(|| {
            format!(
                "the file ends at byte {} inside a {size}-byte value (truncated?)",
                self.bytes.len()
            )
        })?;
        self.position += size;
        // Bring the value to little-endian order, then decode.
        let mut raw = [0u8; 8];
        raw[..size].copy_from_slice(source);
        if self.big_endian {
            raw[..size].reverse();
        }
        let [b0, b1, b2, b3, ..] = raw;
        Ok(match ty {
            Scalar::I8 => f64::from(i8::from_le_bytes([b0])),
            Scalar::U8 => f64::from(b0),
            Scalar::I16 => f64::from(i16::from_le_bytes([b0, b1])),
            Scalar::U16 => f64::from(u16::from_le_bytes([b0, b1])),
            Scalar::I32 => f64::from(i32::from_le_bytes([b0, b1, b2, b3])),
            Scalar::U32 => f64::from(u32::from_le_bytes([b0, b1, b2, b3])),
            Scalar::F32 => f64::from(f32::from_le_bytes([b0, b1, b2, b3])),
            Scalar::F64 => f64::from_le_bytes(raw),
        })
    }

    fn skip(&mut self, ty: Scalar, count: usize) -> Result<(), String> {
        self.start = self.position;
        let end = count
            .checked_mul(ty.size())
            .and_then(|bytes| self.position.checked_add(bytes))
            .filter(|end| *end <= self.bytes.len())
            .ok_or_else(|| {
                format!(
                    "{count} values of {} bytes do not fit in the {} bytes left (truncated?)",
                    ty.size(),
                    self.remaining()
                )
            })?;
        self.position = end;
        Ok(())
    }

    fn remaining(&self) -> usize {
        self.bytes.len() - self.position
    }

    fn min_bytes(&self, ty: Scalar) -> usize {
        ty.size()
    }

    fn mark(&self) -> usize {
        self.start
    }

    fn here(&self) -> usize {
        self.position
    }

    fn describe(&self, mark: usize) -> String {
        format!("byte {mark}")
    }

    fn finish(&mut self) -> Result<(), String> {
        match self.remaining() {
            0 => Ok(()),
            extra => Err(format!("{extra} bytes follow the last element")),
        }
    }
}

/// ASCII values: whitespace-separated tokens, with line numbers kept for messages.
pub(super) struct Ascii<'a> {
    pub(super) bytes: &'a [u8],
    pub(super) position: usize,
    /// Line of the byte at `position`.
    pub(super) line: usize,
    /// Line of the last token.
    pub(super) token_line: usize,
}

impl<'a> Ascii<'a> {
    fn token(&mut self) -> Option<&'a [u8]> {
        while let Some(&byte) = self.bytes.get(self.position).filter(|b| b.is_ascii_whitespace()) {
            self.line += usize::from(byte == b'\n');
            self.position += 1;
        }
        self.token_line = self.line;
        let start = self.position;
        while self.bytes.get(self.position).is_some_and(|b| !b.is_ascii_whitespace()) {
            self.position += 1;
        }
        (self.position > start).then(|| &self.bytes[start..self.position])
    }
}

impl Values for Ascii<'_> {
    fn value(&mut self, ty: Scalar) -> Result<f64, String> {
        let token = self.token().ok_or("the file ends early (truncated?)")?;
        match ty.integer_range() {
            Some((low, high)) => {
                let value = text::parse_i64(token).ok_or_else(|| format!("'{}' is not an integer", show(token)))?;
                if !(low..=high).contains(&value) {
                    return Err(format!("{value} is out of range [{low}, {high}] for its type"));
                }
                Ok(value as f64)
            }
            None => text::parse_f64(token).ok_or_else(|| format!("'{}' is not a number", show(token))),
        }
    }

    fn skip(&mut self, _: Scalar, count: usize) -> Result<(), String> {
        // Each token is at least one byte: the loop is bounded by the input.
        for _ in 0..count {
            self.token().ok_or("the file ends early (truncated?)")?;
        }
        Ok(())
    }

    fn remaining(&self) -> usize {
        self.bytes.len() - self.position
    }

    fn min_bytes(&self, _: Scalar) -> usize {
        1
    }

    fn mark(&self) -> usize {
        self.token_line
    }

    fn here(&self) -> usize {
        self.line
    }

    fn describe(&self, mark: usize) -> String {
        format!("line {mark}")
    }

    fn finish(&mut self) -> Result<(), String> {
        match self.token() {
            None => Ok(()),
            Some(token) => Err(format!("unexpected '{}' after the last element", show(token))),
        }
    }
}
