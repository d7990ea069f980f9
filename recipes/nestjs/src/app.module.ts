import { Body, Controller, Get, Module, Post } from '@nestjs/common';

/** The app's own routes, untouched by verikit: Nest's JSON parsing still applies to them. */
@Controller()
export class AppController {
  @Get('health')
  health(): { ok: true } {
    return { ok: true };
  }

  @Post('orders')
  order(@Body() body: unknown): { received: unknown } {
    return { received: body };
  }
}

@Module({ controllers: [AppController] })
export class AppModule {}
