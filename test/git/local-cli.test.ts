import { cliTarget } from './git-fixture.ts'
import { gitCases } from './git-cases.ts'

gitCases(cliTarget)
