pub mod codec;
pub mod messages;

#[cfg(test)]
mod vectors_test;
