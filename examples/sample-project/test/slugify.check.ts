import { strict as assert } from 'node:assert'
import { slugify } from '../src/slugify.ts'

assert.equal(slugify('Hello, World!'), 'hello-world')
assert.equal(slugify('  Crème brûlée  '), 'creme-brulee')
assert.equal(slugify('a b c', { separator: '_' }), 'a_b_c')
assert.equal(slugify('one two three', { maxLength: 7 }), 'one-two')
assert.equal(slugify('!!!'), '')
console.log('slugify: 5 checks passed')
