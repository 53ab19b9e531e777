pub mod codec;
pub mod messages;
pub mod vocabulary;

#[cfg(test)]
mod vectors_test;
