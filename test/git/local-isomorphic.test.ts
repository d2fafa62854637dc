import { isomorphicLocalTarget } from './git-fixture.ts'
import { gitCases } from './git-cases.ts'

gitCases(isomorphicLocalTarget)
