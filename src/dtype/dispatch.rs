//! The one dtype list, and every dispatch form generated from it: [`match_dtype!`] turns a
//! runtime [`DType`](crate::DType) into a monomorphised call for the dtypes of one *form*, and
//! [`dispatch!`] / [`dispatch_float!`] are its `all` / `float` shorthands.
//!
//! Forms (the `kind` of each dtype is its column in the list of `__dtype_list!`):
//!
//! | form       | dtypes                                   |
//! |------------|------------------------------------------|
//! | `all`      | all 12                                   |
//! | `real`     | all but complex                          |
//! | `numeric`  | real, but not bool                       |
//! | `int`      | integers, not bool (`u8 i8 i16 i32 i64`) |
//! | `signed`   | signed integers (`i8 i16 i32 i64`)       |
//! | `index`    | index dtypes (`i32 i64`)                 |
//! | `float`    | real floats (`f16 bf16 f32 f64`)         |
//! | `complex`  | `c64 c128`                               |
//! | `inexact`  | `float` and `complex`                    |
//!
//! Each arm binds the element type, and on request the type its kernels compute in (f16/bf16
//! compute in f32, see [`FloatCompute`]): `match_dtype!(d, float, (T, C) => body)`.
//!
//! **Adding a dtype**: add its variant to `DType` and its `Element` impl (both in `dtype/`), one
//! line to `__dtype_list!` below (variant, kind, Rust type, compute type), and — only if it is a
//! new kind — a line per form in `__dtype_pick!`. Then only kernels with a special case for it
//! need touching.

use half::{bf16, f16};

/// `match_dtype!(dtype, form, T => body, else other)` runs `body` with the type alias `T` bound
/// to the Rust element type of `dtype` when `dtype` belongs to `form` (see the module docs), and
/// `other` otherwise. `(T, C) => body` also binds `C`, the type the kernel computes in. Without
/// `else`, a dtype outside the form is an internal error (`unreachable!`).
#[macro_export]
#[doc(hidden)]
macro_rules! match_dtype {
    ($dtype:expr, $form:ident, ($T:ident, $C:ident) => $body:expr, else $else:expr) => {
        $crate::__dtype_list!($dtype, $form, [$T, $C], $body, $else)
    };
    ($dtype:expr, $form:ident, $T:ident => $body:expr, else $else:expr) => {
        $crate::__dtype_list!($dtype, $form, [$T, __Compute], $body, $else)
    };
    ($dtype:expr, $form:ident, ($T:ident, $C:ident) => $body:expr) => {{
        let __d: $crate::DType = $dtype;
        $crate::__dtype_list!(
            __d,
            $form,
            [$T, $C],
            $body,
            unreachable!("internal: {} kernel on {}", stringify!($form), __d)
        )
    }};
    ($dtype:expr, $form:ident, $T:ident => $body:expr) => {{
        let __d: $crate::DType = $dtype;
        $crate::__dtype_list!(
            __d,
            $form,
            [$T, __Compute],
            $body,
            unreachable!("internal: {} kernel on {}", stringify!($form), __d)
        )
    }};
}

/// THE dtype list: one line per dtype (variant, kind, Rust type, compute type). Every dispatch
/// form is generated from it by [`__dtype_pick!`].
#[macro_export]
#[doc(hidden)]
macro_rules! __dtype_list {
    ($dtype:expr, $form:ident, [$T:ident, $C:ident], $body:expr, $else:expr) => {{
        use $crate::DType as __D;
        match $dtype {
            __D::Bool => $crate::__dtype_pick!($form bool [$T = bool, $C = bool] $body; $else),
            __D::U8 => $crate::__dtype_pick!($form uint [$T = u8, $C = u8] $body; $else),
            __D::I8 => $crate::__dtype_pick!($form sint [$T = i8, $C = i8] $body; $else),
            __D::I16 => $crate::__dtype_pick!($form sint [$T = i16, $C = i16] $body; $else),
            __D::I32 => $crate::__dtype_pick!($form idx [$T = i32, $C = i32] $body; $else),
            __D::I64 => $crate::__dtype_pick!($form idx [$T = i64, $C = i64] $body; $else),
            __D::F16 => $crate::__dtype_pick!($form half [$T = half::f16, $C = f32] $body; $else),
            __D::BF16 => $crate::__dtype_pick!($form half [$T = half::bf16, $C = f32] $body; $else),
            __D::F32 => $crate::__dtype_pick!($form float [$T = f32, $C = f32] $body; $else),
            __D::F64 => $crate::__dtype_pick!($form float [$T = f64, $C = f64] $body; $else),
            __D::C64 => $crate::__dtype_pick!($form complex
                [$T = $crate::dtype::C64, $C = $crate::dtype::C64] $body; $else),
            __D::C128 => $crate::__dtype_pick!($form complex
                [$T = $crate::dtype::C128, $C = $crate::dtype::C128] $body; $else),
        }
    }};
}

/// Which kinds belong to which form (kinds: `bool`, `uint`, `sint` (i8/i16), `idx` (i32/i64),
/// `half`, `float`, `complex`): expands to the arm's body for a member, to `else` otherwise.
#[macro_export]
#[doc(hidden)]
macro_rules! __dtype_pick {
    (@yes [$T:ident = $R:ty, $C:ident = $Q:ty] $body:expr; $else:expr) => {{
        #[allow(dead_code)]
        type $T = $R;
        #[allow(dead_code)]
        type $C = $Q;
        $body
    }};
    (@no [$($b:tt)*] $body:expr; $else:expr) => {
        $else
    };
    (all $k:ident $($r:tt)*) => { $crate::__dtype_pick!(@yes $($r)*) };
    (real complex $($r:tt)*) => { $crate::__dtype_pick!(@no $($r)*) };
    (real $k:ident $($r:tt)*) => { $crate::__dtype_pick!(@yes $($r)*) };
    (numeric bool $($r:tt)*) => { $crate::__dtype_pick!(@no $($r)*) };
    (numeric complex $($r:tt)*) => { $crate::__dtype_pick!(@no $($r)*) };
    (numeric $k:ident $($r:tt)*) => { $crate::__dtype_pick!(@yes $($r)*) };
    (int uint $($r:tt)*) => { $crate::__dtype_pick!(@yes $($r)*) };
    (int sint $($r:tt)*) => { $crate::__dtype_pick!(@yes $($r)*) };
    (int idx $($r:tt)*) => { $crate::__dtype_pick!(@yes $($r)*) };
    (signed sint $($r:tt)*) => { $crate::__dtype_pick!(@yes $($r)*) };
    (signed idx $($r:tt)*) => { $crate::__dtype_pick!(@yes $($r)*) };
    (index idx $($r:tt)*) => { $crate::__dtype_pick!(@yes $($r)*) };
    (float half $($r:tt)*) => { $crate::__dtype_pick!(@yes $($r)*) };
    (float float $($r:tt)*) => { $crate::__dtype_pick!(@yes $($r)*) };
    (complex complex $($r:tt)*) => { $crate::__dtype_pick!(@yes $($r)*) };
    (inexact half $($r:tt)*) => { $crate::__dtype_pick!(@yes $($r)*) };
    (inexact float $($r:tt)*) => { $crate::__dtype_pick!(@yes $($r)*) };
    (inexact complex $($r:tt)*) => { $crate::__dtype_pick!(@yes $($r)*) };
    ($form:ident $k:ident $($r:tt)*) => { $crate::__dtype_pick!(@no $($r)*) };
}

/// Runs `$body` with the type alias `$T` bound to the Rust element type of `$dtype`.
///
/// `dispatch!(dtype, T => some_generic::<T>(..))`.
#[macro_export]
#[doc(hidden)]
macro_rules! dispatch {
    ($dtype:expr, $T:ident => $body:expr) => {
        $crate::match_dtype!($dtype, all, $T => $body, else unreachable!())
    };
}

/// Like [`dispatch!`] but only for real floating dtypes; `$else` runs for the others.
#[macro_export]
#[doc(hidden)]
macro_rules! dispatch_float {
    ($dtype:expr, $T:ident => $body:expr, else $other:expr) => {
        $crate::match_dtype!($dtype, float, $T => $body, else $other)
    };
}

/// A real float element and the type its kernels compute in: f16/bf16 widen to f32 (and round
/// back), f32/f64 compute in themselves. The `C` of `match_dtype!(d, float, (T, C) => ..)`.
pub(crate) trait FloatCompute: Copy {
    /// The compute type.
    type C: Copy;
    /// The value in the compute type (exact).
    fn widen(self) -> Self::C;
    /// A computed value rounded back to the element type.
    fn narrow(c: Self::C) -> Self;
}

impl FloatCompute for f32 {
    type C = f32;
    #[inline(always)]
    fn widen(self) -> f32 {
        self
    }
    #[inline(always)]
    fn narrow(c: f32) -> f32 {
        c
    }
}

impl FloatCompute for f64 {
    type C = f64;
    #[inline(always)]
    fn widen(self) -> f64 {
        self
    }
    #[inline(always)]
    fn narrow(c: f64) -> f64 {
        c
    }
}

impl FloatCompute for f16 {
    type C = f32;
    #[inline(always)]
    fn widen(self) -> f32 {
        self.to_f32()
    }
    #[inline(always)]
    fn narrow(c: f32) -> f16 {
        f16::from_f32(c)
    }
}

impl FloatCompute for bf16 {
    type C = f32;
    #[inline(always)]
    fn widen(self) -> f32 {
        self.to_f32()
    }
    #[inline(always)]
    fn narrow(c: f32) -> bf16 {
        bf16::from_f32(c)
    }
}
