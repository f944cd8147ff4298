//! Parser of kernel expressions (grammar in the module docs). Errors carry the
//! 0-based character position of the offending token.

use std::str::FromStr;

use super::base::{BaseKernel, BaseKind, Lengthscale, KNOWN_NAMES};
use super::{Kernel, KernelError, ProductVariance};

/// A lexical token.
#[derive(Clone, Debug, PartialEq)]
enum Tok {
    /// A name, key or number.
    Word(String),
    /// One of `( ) [ ] , = + *`.
    Sym(char),
    /// End of input.
    End,
}

/// A token and the character position where it starts.
#[derive(Clone, Debug)]
struct Token {
    tok: Tok,
    pos: usize,
}

impl Token {
    /// How the token is shown in error messages.
    fn describe(&self) -> String {
        match &self.tok {
            Tok::Word(w) => format!("`{w}`"),
            Tok::Sym(c) => format!("`{c}`"),
            Tok::End => "end of input".to_string(),
        }
    }
}

/// Splits the expression into tokens. Number words may contain a sign right after
/// an exponent marker (`1e-3`), which is why `+`/`-` need context here.
fn lex(input: &str) -> Result<Vec<Token>, KernelError> {
    let chars: Vec<char> = input.chars().collect();
    let mut toks = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() {
            i += 1;
        } else if "()[],=+*".contains(c) {
            toks.push(Token {
                tok: Tok::Sym(c),
                pos: i,
            });
            i += 1;
        } else if c.is_ascii_alphanumeric() || c == '.' || c == '_' || c == '-' {
            let numeric = c.is_ascii_digit() || c == '.' || c == '-';
            let start = i;
            i += 1;
            while i < chars.len() {
                let d = chars[i];
                let exponent_sign =
                    numeric && (d == '+' || d == '-') && matches!(chars[i - 1], 'e' | 'E');
                if !(d.is_ascii_alphanumeric() || d == '.' || d == '_' || exponent_sign) {
                    break;
                }
                i += 1;
            }
            toks.push(Token {
                tok: Tok::Word(chars[start..i].iter().collect()),
                pos: start,
            });
        } else {
            return Err(KernelError::Syntax {
                pos: i,
                expected: "a kernel name, a number or one of ( ) [ ] , = + *".to_string(),
                found: format!("`{c}`"),
            });
        }
    }
    toks.push(Token {
        tok: Tok::End,
        pos: chars.len(),
    });
    Ok(toks)
}

/// An argument value: a number or a list of numbers, kept as text until its key
/// says how to read it (dims are integers, everything else is f64).
enum Value {
    Number(Token),
    List(Vec<Token>),
}

/// The deepest nesting of parentheses an expression may have: far beyond any kernel a person
/// or the kernel grammar of model selection writes, and far below what would exhaust the stack
/// of the recursive descent.
pub const MAX_EXPR_DEPTH: usize = 32;

/// The most base kernels an expression may have. Every base kernel adds parameters to fit and a
/// pass over the data to every evaluation; the kernel spaces of model selection use a handful.
pub const MAX_EXPR_BASES: usize = 64;

/// Recursive-descent parser over the token list.
struct Parser {
    toks: Vec<Token>,
    i: usize,
    /// Parentheses open at the current token.
    depth: usize,
    /// Base kernels read so far.
    bases: usize,
    /// The variance policy of every product read.
    products: ProductVariance,
}

impl Parser {
    fn peek(&self) -> &Token {
        &self.toks[self.i]
    }

    fn next(&mut self) -> Token {
        let t = self.toks[self.i].clone();
        if t.tok != Tok::End {
            self.i += 1;
        }
        t
    }

    /// Consumes the symbol `c` if it comes next.
    fn eat(&mut self, c: char) -> bool {
        let hit = self.peek().tok == Tok::Sym(c);
        if hit {
            self.i += 1;
        }
        hit
    }

    fn error(&self, expected: &str) -> KernelError {
        KernelError::Syntax {
            pos: self.peek().pos,
            expected: expected.to_string(),
            found: self.peek().describe(),
        }
    }

    fn expect(&mut self, c: char, expected: &str) -> Result<(), KernelError> {
        if self.eat(c) {
            Ok(())
        } else {
            Err(self.error(expected))
        }
    }

    /// expr := term ('+' term)*
    fn expr(&mut self) -> Result<Kernel, KernelError> {
        let mut terms = vec![self.term()?];
        while self.eat('+') {
            terms.push(self.term()?);
        }
        Ok(Kernel::sum(terms))
    }

    /// term := factor ('*' factor)*
    fn term(&mut self) -> Result<Kernel, KernelError> {
        let mut factors = vec![self.factor()?];
        while self.eat('*') {
            factors.push(self.factor()?);
        }
        Ok(Kernel::product_with(factors, self.products))
    }

    /// factor := base | '(' expr ')'
    fn factor(&mut self) -> Result<Kernel, KernelError> {
        let open = self.peek().pos;
        if self.eat('(') {
            if self.depth == MAX_EXPR_DEPTH {
                return Err(KernelError::TooDeep {
                    pos: open,
                    max: MAX_EXPR_DEPTH,
                });
            }
            self.depth += 1;
            let k = self.expr()?;
            self.expect(')', "`)` to close the parenthesis, `+` or `*`")?;
            self.depth -= 1;
            return Ok(k);
        }
        let tok = self.peek().clone();
        let Tok::Word(name) = &tok.tok else {
            return Err(self.error("a kernel name or `(`"));
        };
        if self.bases == MAX_EXPR_BASES {
            return Err(KernelError::TooLarge {
                pos: tok.pos,
                max: MAX_EXPR_BASES,
            });
        }
        self.bases += 1;
        self.next();
        let kind = BaseKind::from_name(name).ok_or_else(|| KernelError::UnknownKernel {
            pos: tok.pos,
            name: name.clone(),
            known: KNOWN_NAMES,
        })?;
        let mut base = BaseKernel::new(kind);
        if self.eat('(') {
            let mut seen: Vec<String> = Vec::new();
            loop {
                base = self.argument(base, &mut seen)?;
                if !self.eat(',') {
                    break;
                }
            }
            self.expect(')', "`,` or `)` after an argument")?;
        }
        Ok(Kernel::Base(base))
    }

    /// arg := key '=' value | value, applied to `base`.
    fn argument(
        &mut self,
        base: BaseKernel,
        seen: &mut Vec<String>,
    ) -> Result<BaseKernel, KernelError> {
        let kind = base.kind();
        let start = self.peek().pos;
        let is_key =
            matches!(self.peek().tok, Tok::Word(_)) && self.toks[self.i + 1].tok == Tok::Sym('=');
        let key = if is_key {
            let Tok::Word(key) = self.next().tok else {
                unreachable!("checked above")
            };
            self.next();
            key
        } else if kind == BaseKind::Const {
            "var".to_string()
        } else {
            return Err(self.error(&format!(
                "`key=value` (a bare value is only allowed for const); {} accepts {}",
                kind.name(),
                kind.valid_keys()
            )));
        };
        if seen.contains(&key) {
            return Err(KernelError::DuplicateKey {
                kernel: kind.name(),
                key,
            }
            .at(start));
        }
        seen.push(key.clone());
        let value = self.value()?;
        apply(base, &key, value).map_err(|e| e.at(start))
    }

    /// value := number | '[' number (',' number)* ']'
    fn value(&mut self) -> Result<Value, KernelError> {
        if self.eat('[') {
            let mut items = vec![self.word("a number")?];
            while self.eat(',') {
                items.push(self.word("a number")?);
            }
            self.expect(']', "`,` or `]` in a list")?;
            Ok(Value::List(items))
        } else {
            Ok(Value::Number(self.word("a number or `[`")?))
        }
    }

    fn word(&mut self, expected: &str) -> Result<Token, KernelError> {
        match self.peek().tok {
            Tok::Word(_) => Ok(self.next()),
            _ => Err(self.error(expected)),
        }
    }
}

/// Reads a number token as f64.
fn number(tok: &Token) -> Result<f64, KernelError> {
    let Tok::Word(text) = &tok.tok else {
        unreachable!("values are words")
    };
    text.parse().map_err(|_| KernelError::Syntax {
        pos: tok.pos,
        expected: "a number".to_string(),
        found: tok.describe(),
    })
}

/// Reads a dims entry: a plain non-negative integer.
fn column(tok: &Token, kind: BaseKind) -> Result<usize, KernelError> {
    let Tok::Word(text) = &tok.tok else {
        unreachable!("values are words")
    };
    let digits = text.chars().all(|c| c.is_ascii_digit());
    text.parse().ok().filter(|_| digits).ok_or_else(|| {
        KernelError::BadValue {
            kernel: kind.name(),
            key: "dims".to_string(),
            expected: "non-negative integer column indices like [0, 2]",
        }
        .at(tok.pos)
    })
}

/// Applies `key = value` to `base`.
fn apply(base: BaseKernel, key: &str, value: Value) -> Result<BaseKernel, KernelError> {
    let kind = base.kind();
    let bad = |key: &str, expected: &'static str| KernelError::BadValue {
        kernel: kind.name(),
        key: key.to_string(),
        expected,
    };
    match (key, value) {
        ("ls", Value::Number(t)) => base.with_lengthscale(Lengthscale::Iso(number(&t)?)),
        ("ls", Value::List(ts)) => {
            let v = ts.iter().map(number).collect::<Result<_, _>>()?;
            base.with_lengthscale(Lengthscale::Ard(v))
        }
        ("dims", Value::List(ts)) => {
            let dims = ts
                .iter()
                .map(|t| column(t, kind))
                .collect::<Result<_, _>>()?;
            base.with_dims(dims)
        }
        ("dims", Value::Number(_)) => Err(bad("dims", "a list of column indices like [0, 2]")),
        ("var" | "alpha" | "period", Value::Number(t)) => {
            let v = number(&t)?;
            match key {
                "var" => base.with_var(v),
                "alpha" => base.with_alpha(v),
                _ => base.with_period(v),
            }
        }
        (k @ ("var" | "alpha" | "period"), Value::List(_)) => {
            Err(bad(k, "a single positive number"))
        }
        (other, _) => Err(KernelError::InvalidKey {
            kernel: kind.name(),
            key: other.to_string(),
            valid: kind.valid_keys(),
        }),
    }
}

impl Kernel {
    /// Parses a kernel expression such as `const * se(ls=[1, 2]) + white(var=0.1)`, with the
    /// default [`ProductVariance::FirstFactor`] policy in every product.
    pub fn parse(expr: &str) -> Result<Kernel, KernelError> {
        Self::parse_with(expr, ProductVariance::FirstFactor)
    }

    /// Parses a kernel expression with the variance policy `products` in every product
    /// (see [`Kernel::product_with`]); a kernel printed from it parses back to itself with the
    /// same policy.
    pub fn parse_with(expr: &str, products: ProductVariance) -> Result<Kernel, KernelError> {
        let toks = lex(expr)?;
        if toks.len() == 1 {
            return Err(KernelError::Empty);
        }
        let mut p = Parser {
            toks,
            i: 0,
            depth: 0,
            bases: 0,
            products,
        };
        let k = p.expr()?;
        if p.peek().tok != Tok::End {
            return Err(p.error("`+`, `*` or end of input"));
        }
        Ok(k)
    }
}

impl FromStr for Kernel {
    type Err = KernelError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Kernel::parse(s)
    }
}
