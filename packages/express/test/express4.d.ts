// Express 4 is installed under an alias for the conformance run; its API is typed like Express 5's here.
declare module 'express4' {
  import express from 'express';
  export default express;
}
