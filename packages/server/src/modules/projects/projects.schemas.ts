import { Type } from '@sinclair/typebox';

export const ProjectSchema = Type.Object(
  {
    id: Type.String({ description: 'Begins with `prj_`.' }),
    object: Type.Literal('project'),
    name: Type.String(),
    created_at: Type.String({ format: 'date-time' }),
  },
  { $id: 'Project' },
);
