//! Element types: the [`DType`] enum (the 12 dtypes), the sealed [`Element`] trait that maps Rust
//! types to dtypes, [`Scalar`] values, PyTorch type promotion (`promote.rs`, [`result_type`]) and the dispatch
//! macros that turn a runtime `DType` into a monomorphised call (`dispatch.rs`: the one list of
//! dtypes every dispatch form is generated from, and how to add a dtype); `complex_div.rs`:
//! PyTorch's complex division; `complex_pow.rs`: its complex `pow` (glibc's `cpow`).

mod complex_div;
mod complex_pow;
mod dispatch;
mod element;
mod promote;
mod scalar;

pub(crate) use complex_div::{div_c64, div_c128};
pub(crate) use complex_pow::{pow_c64, pow_c128};
pub(crate) use dispatch::FloatCompute;
pub use element::Element;
pub(crate) use element::cast;
pub(crate) use promote::result_type_scalar;
pub use promote::{Operand, promote_types, result_type};
pub use scalar::Scalar;

use num_complex::Complex;
use std::fmt;

/// Complex with f32 parts (`complex64`).
pub type C64 = Complex<f32>;
/// Complex with f64 parts (`complex128`).
pub type C128 = Complex<f64>;

/// The element type of a tensor.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DType {
    /// `bool`
    Bool,
    /// `u8`
    U8,
    /// `i8`
    I8,
    /// `i16`
    I16,
    /// `i32`
    I32,
    /// `i64`
    I64,
    /// `half::f16`
    F16,
    /// `half::bf16`
    BF16,
    /// `f32`
    F32,
    /// `f64`
    F64,
    /// `Complex<f32>`
    C64,
    /// `Complex<f64>`
    C128,
}

/// The broad category of a dtype, used by scalar type promotion.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Category {
    /// bool
    Bool,
    /// signed or unsigned integers
    Integral,
    /// real floating point
    Floating,
    /// complex
    Complex,
}

impl DType {
    /// All dtypes, in promotion-lattice order.
    pub const ALL: [DType; 12] = [
        DType::Bool,
        DType::U8,
        DType::I8,
        DType::I16,
        DType::I32,
        DType::I64,
        DType::F16,
        DType::BF16,
        DType::F32,
        DType::F64,
        DType::C64,
        DType::C128,
    ];

    /// Size of one element in bytes.
    pub fn size(self) -> usize {
        match self {
            DType::Bool | DType::U8 | DType::I8 => 1,
            DType::I16 | DType::F16 | DType::BF16 => 2,
            DType::I32 | DType::F32 => 4,
            DType::I64 | DType::F64 | DType::C64 => 8,
            DType::C128 => 16,
        }
    }

    /// PyTorch's name (`"float32"`, `"int64"`, `"complex64"`, ...).
    pub fn name(self) -> &'static str {
        match self {
            DType::Bool => "bool",
            DType::U8 => "uint8",
            DType::I8 => "int8",
            DType::I16 => "int16",
            DType::I32 => "int32",
            DType::I64 => "int64",
            DType::F16 => "float16",
            DType::BF16 => "bfloat16",
            DType::F32 => "float32",
            DType::F64 => "float64",
            DType::C64 => "complex64",
            DType::C128 => "complex128",
        }
    }

    /// Parses a PyTorch dtype name (`"float32"`, `"float"`, `"long"`, ...).
    pub fn from_name(name: &str) -> Option<DType> {
        let name = name.strip_prefix("torch.").unwrap_or(name);
        Some(match name {
            "bool" => DType::Bool,
            "uint8" => DType::U8,
            "int8" => DType::I8,
            "int16" | "short" => DType::I16,
            "int32" | "int" => DType::I32,
            "int64" | "long" => DType::I64,
            "float16" | "half" => DType::F16,
            "bfloat16" => DType::BF16,
            "float32" | "float" => DType::F32,
            "float64" | "double" => DType::F64,
            "complex64" | "cfloat" => DType::C64,
            "complex128" | "cdouble" => DType::C128,
            _ => return None,
        })
    }

    /// PyTorch's scalar-type name used in error messages (`Float`, `Long`, `ComplexFloat`, ...).
    pub fn torch_scalar_name(self) -> &'static str {
        match self {
            DType::Bool => "Bool",
            DType::U8 => "Byte",
            DType::I8 => "Char",
            DType::I16 => "Short",
            DType::I32 => "Int",
            DType::I64 => "Long",
            DType::F16 => "Half",
            DType::BF16 => "BFloat16",
            DType::F32 => "Float",
            DType::F64 => "Double",
            DType::C64 => "ComplexFloat",
            DType::C128 => "ComplexDouble",
        }
    }

    /// PyTorch's legacy type string (`torch.FloatTensor`), used in saved-tensor messages.
    pub fn legacy_type_name(self) -> String {
        format!("torch.{}Tensor", self.torch_scalar_name())
    }

    /// The dtype's category.
    pub fn category(self) -> Category {
        match self {
            DType::Bool => Category::Bool,
            DType::U8 | DType::I8 | DType::I16 | DType::I32 | DType::I64 => Category::Integral,
            DType::F16 | DType::BF16 | DType::F32 | DType::F64 => Category::Floating,
            DType::C64 | DType::C128 => Category::Complex,
        }
    }

    /// True for real floating-point dtypes.
    pub fn is_float(self) -> bool {
        self.category() == Category::Floating
    }
    /// True for complex dtypes.
    pub fn is_complex(self) -> bool {
        self.category() == Category::Complex
    }
    /// True for float or complex dtypes (the ones that can require grad).
    pub fn is_differentiable(self) -> bool {
        self.is_float() || self.is_complex()
    }
    /// True for bool and integer dtypes.
    pub fn is_integral(self, include_bool: bool) -> bool {
        match self.category() {
            Category::Bool => include_bool,
            Category::Integral => true,
            _ => false,
        }
    }
    /// True for the signed dtypes (all floats, complex and signed ints).
    pub fn is_signed(self) -> bool {
        !matches!(self, DType::Bool | DType::U8)
    }
    /// The complex dtype with this real dtype's precision (`F64 -> C128`, others -> `C64`).
    pub fn to_complex(self) -> DType {
        match self {
            DType::F64 | DType::C128 => DType::C128,
            _ => DType::C64,
        }
    }
    /// The real dtype of a complex dtype (identity otherwise).
    pub fn to_real(self) -> DType {
        match self {
            DType::C64 => DType::F32,
            DType::C128 => DType::F64,
            d => d,
        }
    }
    /// The dtype used to accumulate sums: i64 for integers/bool, f32 for f16/bf16, itself otherwise.
    pub fn accumulate_dtype(self) -> DType {
        match self.category() {
            Category::Bool | Category::Integral => DType::I64,
            _ => match self {
                DType::F16 | DType::BF16 => DType::F32,
                d => d,
            },
        }
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The device a tensor lives on. Only the CPU exists today; `Cuda(n)` arrives with the `cuda`
/// feature and is handled entirely in `storage` and `backend`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Device {
    /// Host memory.
    #[default]
    Cpu,
}

impl fmt::Display for Device {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Device::Cpu => f.write_str("cpu"),
        }
    }
}
