//! Test utilities that read tensor values on the host by design (the `torch.testing` of this
//! crate): [`gradcheck`](gradcheck::gradcheck) and `gradgradcheck`, re-exported from
//! [`crate::autograd`].

pub(crate) mod gradcheck;
